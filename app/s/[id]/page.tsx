// A session's IDE. The id comes from the URL; everything else is loaded client-side.
import { IdeFrame } from "../../_components/ide-frame";

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <IdeFrame sessionId={id} />;
}
