"""Baseline for the copy/paste benchmark: Python's json and plistlib decoding and encoding the same
clipboard document Graft wrote. Prints `<codec>-decode <seconds>` and `<codec>-encode <seconds>` on
standard error; each time includes reading or writing the file.

    python3 clipboard_baseline.py json|plist INPUT OUTPUT
"""
import json
import plistlib
import sys
import time

codec, source, destination = sys.argv[1], sys.argv[2], sys.argv[3]

start = time.perf_counter()
with open(source, "rb") as handle:
    data = handle.read()
document = json.loads(data) if codec == "json" else plistlib.loads(data)
decoded = time.perf_counter() - start

start = time.perf_counter()
if codec == "json":
    encoded_bytes = json.dumps(document).encode("utf-8")
else:
    encoded_bytes = plistlib.dumps(document, fmt=plistlib.FMT_BINARY)
with open(destination, "wb") as handle:
    handle.write(encoded_bytes)
encoded = time.perf_counter() - start

print(f"{codec}-decode {decoded:.3f}", file=sys.stderr)
print(f"{codec}-encode {encoded:.3f}", file=sys.stderr)
