"""BM25 top-k over the bench's corpus with Tantivy, in-process: the peer engine's figure.

Reads a JSON lines file ({"queries": [...], "k": 10}, then one text a line, as a JSON string),
builds the index and prints a JSON line with its version and build time. Then, for each line read
from standard input ({"rounds": n}), runs every query n times and prints a JSON line with the
per-query latencies (search plus reading the ids of the hits), until standard input ends: the
bench measures it beside the service, in the same minutes. English stemming (Tantivy's en_stem
tokenizer), k1 = 1.2, b = 0.75.
"""
import json
import re
import sys
import time

import tantivy


def main() -> None:
    lines = open(sys.argv[1], encoding="utf-8")
    job = json.loads(next(lines))
    schema_builder = tantivy.SchemaBuilder()
    schema_builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    schema_builder.add_integer_field("n", stored=True, indexed=False, fast=True)
    schema = schema_builder.build()
    index = tantivy.Index(schema)
    started = time.perf_counter()
    writer = index.writer(heap_size=500_000_000, num_threads=1)
    for n, line in enumerate(lines):
        document = tantivy.Document()
        document.add_text("body", json.loads(line))
        document.add_integer("n", n)
        writer.add_document(document)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    build_ms = (time.perf_counter() - started) * 1000
    lines.close()
    searcher = index.searcher()
    k = job["k"]
    # Only words: the query parser's syntax (quotes, colons, +, -) must not change what is asked.
    parsed = [index.parse_query(" ".join(re.findall(r"\w+", q)) or "nothing", ["body"]) for q in job["queries"]]
    version = tantivy.__version__ if hasattr(tantivy, "__version__") else None
    print(json.dumps({"version": version, "build_ms": build_ms}), flush=True)
    for command in sys.stdin:
        latencies = []
        for _ in range(json.loads(command)["rounds"]):
            for query in parsed:
                t0 = time.perf_counter()
                hits = searcher.search(query, k).hits
                [searcher.doc(address)["n"][0] for _, address in hits]
                latencies.append((time.perf_counter() - t0) * 1000)
        print(json.dumps({"latencies_ms": latencies}), flush=True)


if __name__ == "__main__":
    main()
