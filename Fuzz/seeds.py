#!/usr/bin/env python3
"""Writes the seed corpora in Fuzz/corpus/ (json, revtree, blip, versionvector, coverage). Stdlib only.

The seeds are valid inputs of each format, so that the fuzzers (scripts/fuzz) and
the seeded mutation tests start from inputs that reach deep into the decoders.
Files already there (for instance crash regressions) are kept.
"""

import hashlib
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.realpath(__file__))


def put(kind, name, data):
    path = os.path.join(HERE, "corpus", kind, name)
    with open(path, "wb") as f:
        f.write(data)


def varint(n):
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


# ------------------------------------------------------------------ JSON
docs = {
    "object": {"a": 1, "b": [True, False, None], "c": {"d": "e"}},
    "numbers": [0, -1, 1.5, 1e300, -2.5e-7, 9007199254740993, 123456789012345678901234567890],
    "strings": ["", "é", "\u0000\u001f\"\\/", "\ud83d\ude00", "line\nbreak\ttab"],
    "document": {"_id": "doc", "_rev": "2-b", "_revisions": {"start": 2, "ids": ["b", "a"]},
                 "_attachments": {"a.txt": {"content_type": "text/plain", "digest": "sha1-x", "length": 5,
                                            "revpos": 1, "stub": True}}, "type": "task", "tags": ["x"]},
    "nested": [[[[[[[[{"k": [[[]]]}]]]]]]]],
}
for name, value in docs.items():
    put("json", name + ".json", json.dumps(value).encode())
put("json", "escapes.json", b'{"u":"\\u00e9\\ud83d\\ude00\\n","k\\"":1}')
put("json", "whitespace.json", b' \t\n{ "a" : [ 1 , 2 ] }\r\n')

# ------------------------------------------------------------------ RevTree
def tree(nodes):
    """nodes: (parent index or None, deleted, has_body, generation, sequence, digest hex)."""
    out = bytearray([1]) + varint(len(nodes))
    for parent, deleted, body, gen, seq, digest in nodes:
        out += varint(0 if parent is None else parent + 1)
        raw = bytes.fromhex(digest) if len(digest) % 2 == 0 and all(c in "0123456789abcdef" for c in digest) else None
        out.append((1 if deleted else 0) | (2 if body else 0) | (4 if raw is not None else 0))
        out += varint(gen) + varint(seq)
        d = raw if raw is not None else digest.encode()
        out += varint(len(d)) + d


    return bytes(out)


def h(s):
    return hashlib.sha1(s.encode()).hexdigest()


put("revtree", "one.bin", tree([(None, False, True, 1, 1, h("a"))]))
put("revtree", "chain.bin", tree([(None, False, False, 1, 1, h("a")), (0, False, False, 2, 2, h("b")),
                                  (1, False, True, 3, 3, h("c"))]))
put("revtree", "conflict.bin", tree([(None, False, True, 1, 1, h("a")), (0, False, True, 2, 2, h("b")),
                                     (0, True, True, 2, 3, h("c")), (1, False, True, 3, 4, "xyz")]))
put("revtree", "stemmed.bin", tree([(None, False, False, 500, 7, h("a")), (0, False, True, 501, 8, h("b"))]))

# ------------------------------------------------------------------ BLIP
# Frames of one direction: varint number, varint flags, payload, CRC-32 (big endian)
# of the payload bytes running over the whole direction. The fuzz input is a list of
# frames, each prefixed by a 2-byte big-endian length.
class Direction:
    def __init__(self):
        self.crc = 0
        self.deflate = zlib.compressobj(6, zlib.DEFLATED, -15)

    def frame(self, number, flags, payload, compress=False):
        self.crc = zlib.crc32(payload, self.crc)
        if compress:
            data = self.deflate.compress(payload) + self.deflate.flush(zlib.Z_SYNC_FLUSH)
            assert data.endswith(b"\x00\x00\xff\xff")
            data = data[:-4]
            flags |= 0x08
        else:
            data = payload
        return varint(number) + varint(flags) + data + struct.pack(">I", self.crc)


def message(props, body=b""):
    p = b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in props)
    return varint(len(p)) + p + body


def framed(frames):
    return b"".join(struct.pack(">H", len(f)) + f for f in frames)


d = Direction()
put("blip", "request.bin", framed([d.frame(1, 0, message([("Profile", "getCheckpoint"), ("client", "x")]))]))
d = Direction()
body = json.dumps({"_id": "doc", "n": list(range(50))}).encode()
put("blip", "rev.bin", framed([d.frame(1, 0, message([("Profile", "rev"), ("id", "doc"), ("rev", "1-a")], body))]))
d = Direction()
msg = message([("Profile", "changes")], json.dumps([[1, "a", "1-a"], [2, "b", "1-b"]]).encode())
put("blip", "two-frames.bin", framed([d.frame(1, 0x40, msg[:10]), d.frame(1, 0, msg[10:])]))
d = Direction()
put("blip", "compressed.bin", framed([d.frame(1, 0, message([("Profile", "norev"), ("id", "x")], b"z" * 300),
                                              compress=True),
                                      d.frame(2, 0x20, message([("Profile", "setCheckpoint")], b"{}"),
                                              compress=True)]))
d = Direction()
put("blip", "reply.bin", framed([d.frame(1, 1, message([], b'{"ok":true}')), d.frame(2, 2, message(
    [("Error-Domain", "HTTP"), ("Error-Code", "404")], b"missing"))]))
put("blip", "ack.bin", framed([varint(1) + varint(4) + varint(65536)]))

# ------------------------------------------------------------------ VersionVector
# Text as Couchbase Lite 4 (", " / "; ") and Sync Gateway 4 ("," / ";") send it; two
# vectors on two lines exercise comparison, merge and reconciliation.
A, B, C, D = "AliceAliceAliceAliceAA", "BobBobBobBobBobBobBobA", "CarolCarolCarolCarolCA", "DaveDaveDaveDaveDaveDA"
vectors = {
    "cv": f"1@{A}",
    "cbl": f"3@{A}; 2@{B}, 1@{D}, 2@{C}",
    "merge": f"7@{A}, 6@{B}, 4@{C}; 2@{D}",
    "merge-only": f"3@{A}, 2@{B}, 1@{C};",
    "sg": f"18000000000a0000@{A},17ff000000000000@{B};1700000000000000@{C}",
    "legacy": f"5@{A}; 4@{B}, 3-e0c8012361e94df6a1e1c2977169480e, 2-abc",
    "rte": "3039e0c8012361@Revision+Tree+Encoding",
    "conflict": f"6@{A}; 2@{B}, 1@{D}, 2@{C}\n4@{B}; 1@{D}, 2@{C}",
    "ancestor": f"6@{A}; 2@{B}\n2@{B}",
}
os.makedirs(os.path.join(HERE, "corpus", "versionvector"), exist_ok=True)
for name, text in vectors.items():
    put("versionvector", name + ".txt", text.encode())

# `shoal/covered` reports: store line, live line ("-" for none), JSON body.
S1, S2, S3 = "a" * 32, "b" * 32, "0123456789abcdef" * 2
reports = {
    "first": (S1, "-", {S2: "1-5000", S3: "1-200,205,207-300"}),
    "live": (S1, f"{S2},{S3}", {S2: "5001-5200"}),
    "yours": (S2, "-", {S2: "17,19,21-40", S1: "1"}),
    "empty": (S1, "", {}),
    "wide": (S3, "-", {S1: ",".join(str(n) for n in range(1, 400, 2))}),
    "max": (S1, "-", {S2: "18446744073709551614-18446744073709551615"}),
}
os.makedirs(os.path.join(HERE, "corpus", "coverage"), exist_ok=True)
for name, (store, live, body) in reports.items():
    put("coverage", name + ".txt", f"{store}\n{live}\n".encode() + json.dumps(body).encode())

print("seeds written to", os.path.join(HERE, "corpus"))
