// A small BM25F index for tool search: fields with weights (name, search hint, description)
// are folded into one weighted term frequency per document. Postings are typed arrays and a
// query reuses one score buffer, so a query over 10k tools touches only the matching postings.
// (No kept BM25 library is installed; this is ~150 lines and measured in bench/tool-search.)

export interface Bm25Field {
  text: string;
  weight: number;
}

export interface Bm25Hit {
  doc: number;
  score: number;
}

const STOPWORDS = new Set(
  "a an and are as at be by for from has have in into is it its of on or that the this to was were will with you your i me my we our can do does use using".split(
    " ",
  ),
);

// running → runn → run; but not fill, pass, buzz
function undouble(t: string): string {
  const n = t.length;
  return n > 2 && t[n - 1] === t[n - 2] && !"lsz".includes(t[n - 1]) ? t.slice(0, -1) : t;
}

function stem(t: string): string {
  if (t.length > 4 && t.endsWith("ies")) return `${t.slice(0, -3)}y`;
  if (t.length > 5 && t.endsWith("ing")) return undouble(t.slice(0, -3));
  if (t.length > 4 && t.endsWith("ed") && !t.endsWith("eed")) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith("es") && /(?:sh|ch|x|ss)es$/.test(t)) return t.slice(0, -2);
  if (t.length > 3 && t.endsWith("s") && !t.endsWith("ss")) return t.slice(0, -1);
  return t;
}

/** Lowercased, camelCase- and punctuation-split, stop-word-free, lightly stemmed terms. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  for (const w of words) if (w && !STOPWORDS.has(w)) out.push(stem(w));
  return out;
}

export class Bm25Index {
  readonly size: number;
  private readonly vocab = new Map<string, number>();
  private readonly postingDocs: Int32Array[] = [];
  private readonly postingTf: Float32Array[] = [];
  private readonly idf: Float64Array;
  /** k1 * (1 - b + b * dl / avgdl), precomputed per document. */
  private readonly norm: Float64Array;
  private readonly scores: Float64Array;
  private readonly touched: Int32Array;

  constructor(
    docs: readonly Bm25Field[][],
    private readonly k1 = 1.2,
    b = 0.75,
  ) {
    this.size = docs.length;
    const lists: { docs: number[]; tf: number[] }[] = [];
    const lengths = new Float64Array(docs.length);
    docs.forEach((fields, d) => {
      const tf = new Map<number, number>();
      for (const f of fields) {
        for (const term of tokenize(f.text)) {
          let id = this.vocab.get(term);
          if (id === undefined) {
            id = lists.length;
            this.vocab.set(term, id);
            lists.push({ docs: [], tf: [] });
          }
          tf.set(id, (tf.get(id) ?? 0) + f.weight);
          lengths[d] += f.weight;
        }
      }
      for (const [id, w] of tf) {
        lists[id].docs.push(d);
        lists[id].tf.push(w);
      }
    });
    let total = 0;
    for (const l of lengths) total += l;
    const avgdl = docs.length > 0 && total > 0 ? total / docs.length : 1;
    this.norm = new Float64Array(docs.length);
    for (let d = 0; d < docs.length; d++) this.norm[d] = k1 * (1 - b + (b * lengths[d]) / avgdl);
    this.idf = new Float64Array(lists.length);
    lists.forEach((l, id) => {
      this.postingDocs.push(Int32Array.from(l.docs));
      this.postingTf.push(Float32Array.from(l.tf));
      const df = l.docs.length;
      this.idf[id] = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
    });
    this.scores = new Float64Array(docs.length);
    this.touched = new Int32Array(docs.length);
  }

  /** Best `limit` documents for the query, highest score first; ties by document order. */
  search(query: string, limit: number): Bm25Hit[] {
    const ids = new Set<number>();
    for (const t of tokenize(query)) {
      const id = this.vocab.get(t);
      if (id !== undefined) ids.add(id);
    }
    const { scores, touched, norm, k1 } = this;
    let count = 0;
    for (const id of ids) {
      const docs = this.postingDocs[id];
      const tfs = this.postingTf[id];
      const idf = this.idf[id] * (k1 + 1);
      for (let p = 0; p < docs.length; p++) {
        const d = docs[p];
        const tf = tfs[p];
        if (scores[d] === 0) touched[count++] = d;
        scores[d] += (idf * tf) / (tf + norm[d]);
      }
    }
    const top = topK(scores, touched, count, limit);
    for (let i = 0; i < count; i++) scores[touched[i]] = 0;
    return top;
  }
}

function better(a: Bm25Hit, b: Bm25Hit) {
  return a.score > b.score || (a.score === b.score && a.doc < b.doc);
}

// Insertion into a short sorted list: limit is small (8), so this beats a heap.
function topK(scores: Float64Array, touched: Int32Array, count: number, limit: number): Bm25Hit[] {
  const top: Bm25Hit[] = [];
  if (limit <= 0) return top;
  for (let i = 0; i < count; i++) {
    const hit = { doc: touched[i], score: scores[touched[i]] };
    if (top.length === limit && !better(hit, top[limit - 1])) continue;
    let at = top.length < limit ? top.length : limit - 1;
    if (top.length < limit) top.push(hit);
    while (at > 0 && better(hit, top[at - 1])) {
      top[at] = top[at - 1];
      at--;
    }
    top[at] = hit;
  }
  return top;
}
