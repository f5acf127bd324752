// Sends a chosen .zip / .tar.gz to the server and returns the upload's id, which "New project"
// passes on as its archive source. The upload endpoint belongs to the archive uploads
// (services/uploads.ts): this is the one place the home page knows how to reach it.
export async function uploadArchive(file: File): Promise<string> {
  const res = await fetch(`/api/uploads?name=${encodeURIComponent(file.name)}`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: file,
  });
  const body = (await res.json().catch(() => ({}))) as { uploadId?: string; error?: string };
  if (!res.ok || !body.uploadId) throw new Error(body.error ?? `the upload failed (HTTP ${res.status})`);
  return body.uploadId;
}
