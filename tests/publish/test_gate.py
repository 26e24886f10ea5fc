"""The publish gate: the redactor's rules over every byte of every file, and GitHub's size limits."""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import pytest

from sitegen.errors import ConfigError
from sitegen.publish import gate, scan
from sitegen.publish.gate import blob_id, check_site, compile_allow, site_files
from sitegen.redact import Redactor
from sitegen.write.site import MARKER

TOKEN = "ghp_" + "Q7w3Er5tY8uI0oP2aS4dF6gH9jK1lZ3xC5vB"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWx"


def _site(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    site = tmp_path / "site"
    for rel, data in files.items():
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return site


def _png_with_text(key: str, text: str) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\0\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"tEXt", key.encode() + b"\0" + text.encode())
        + chunk(b"IDAT", idat)
        + chunk(b"IEND", b"")
    )


def _all_output(report) -> str:
    return "\n".join([*report.lines(), report.summary()])


def test_built_site_passes(site):
    """A real built site (pages, charts, data, cards, trials.csv.gz, vendored JS) has no finding."""
    report = check_site(site)
    assert report.ok, report.lines()
    rels = {f.rel for f in report.files}
    assert "index.html" in rels and any(r.endswith("card.png") for r in rels)
    assert any(r.endswith(".csv.gz") for r in rels)
    assert MARKER not in rels
    for f in report.files[:20]:
        assert f.blob == blob_id((site / f.rel).read_bytes())


def test_planted_token_is_reported_masked(tmp_path):
    site = _site(
        tmp_path, {"index.html": "<p>hi</p>\n", "notes/extra.txt": f"one\ntwo {TOKEN} three\n"}
    )
    report = check_site(site)
    assert not report.ok
    assert [str(x).split(": ")[0:2] for x in report.leaks] == [
        ["notes/extra.txt:2", "github-token"]
    ]
    assert report.leaks[0].excerpt == "two [REDACTED] three"
    assert TOKEN not in _all_output(report) and TOKEN[:12] not in _all_output(report)


HEX40 = "8b483b7f4c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f"
# The shapes the build redacts by what stands beside the secret, as a user's file holds them
# (the redactor and the gate share their rules: each must stop a publish).
BESIDE = {
    "argv-flow": (f"launcher_argv: [python, -m, train, --wandb-api-key, {HEX40}]", "cli-secret"),
    "argv-json": (f'{{"argv": ["train", "--wandb-api-key", "{HEX40}"]}}', "cli-secret"),
    "argv-block": (f"argv:\n- --hf-token\n- {HEX40}\n", "cli-secret"),
    "override": (f"hydra_overrides: ['+logger.wandb.key={HEX40}']", "secret-assignment"),
    "nested": (f"logger:\n  wandb:\n    key: {HEX40}\n", "secret-assignment"),
    "env-yaml": (f"env_list:\n- name: WANDB_API_KEY\n  value: {HEX40}\n", "secret-env-pair"),
    "env-json": (f'[{{"name": "WANDB_API_KEY", "value": "{HEX40}"}}]', "secret-env-pair"),
    "aws-pair": (
        "aws_note: 'AKIAQWERTYUIOPASDFGH beKXgzg2wJalrXUtnFEMIK7MDENGbPxRfiCYEXAM'",
        "aws-secret-key",
    ),
    "url-at": ("api_base2: 'https://svc:Hun@JfupxqZKm4bV@inference.internal/v1'", "url-password"),
    "error": (f"AuthenticationError: Invalid API key: {HEX40}", "error-secret"),
    "error-token": (f"401: invalid token {HEX40}", "error-secret"),
    "dotted-flag": (f"python train.py --wandb.key={HEX40}", "cli-secret"),
    "fish": (f"set -gx WANDB_API_KEY {HEX40}", "cli-secret"),
    "dockerfile": (f"Step 3/9 : ENV WANDB_API_KEY {HEX40}", "cli-secret"),
    "docker-login": (f"docker login -u bot -p {HEX40} ghcr.io", "cli-password"),
    "netrc": (f"machine api.wandb.ai\n  login user\n  password {HEX40}", "netrc-password"),
    "yaml-block": (f"wandb:\n  api_key: |-\n    {HEX40}\n", "secret-assignment"),
    "pair": (f"env = [('WANDB_API_KEY', '{HEX40}')]", "secret-env-pair"),
    "repr": (f"WandbConfig(project='p', key='{HEX40}')", "secret-assignment"),
    "json-in-json": (f'{{"cfg": "{{\\"api_key\\": \\"{HEX40}\\"}}"}}', "secret-assignment"),
    "query-key": (f"https://api.example/v1?key={HEX40}", "secret-assignment"),
    "wandb-v1": (f"key: wandb_v1_{HEX40}{HEX40}", "wandb-key"),
}


@pytest.mark.parametrize("name", sorted(BESIDE))
def test_each_secret_beside_its_name_in_a_users_file_stops_the_publish(tmp_path, name):
    text, kind = BESIDE[name]
    for rel in ("notes/mine.txt", "about.html"):
        site = _site(
            tmp_path / rel.replace("/", "-"), {"index.html": "<p>ok</p>", rel: text + "\n"}
        )
        report = check_site(site, workers=1)
        assert not report.ok and kind in {x.kind for x in report.leaks}, (rel, report.lines())
        assert {x.path for x in report.leaks} == {rel}
        out = _all_output(report)
        assert "JfupxqZKm4bV" not in out and HEX40[:20] not in out and "beKXgzg2" not in out


def test_html_is_read_as_a_browser_shows_it(tmp_path):
    """The build escapes values into pages: an escaped masked value is clean, an escaped secret is not."""
    site = _site(
        tmp_path,
        {
            "jobs/a/index.html": "<pre>\nwandb_api_key: &#39;[REDACTED]&#39;\nlr: 1e-6\n</pre>\n",
            "jobs/b/index.html": "<pre>\nx: 1\ndb_password: &#39;hunter2-but-longer&#39;\n</pre>\n",
        },
    )
    report = check_site(site)
    assert [(x.path, x.line, x.kind) for x in report.leaks] == [
        ("jobs/b/index.html", 3, "secret-assignment")
    ]
    assert "hunter2" not in _all_output(report)


def test_gzip_png_and_pem_are_scanned(tmp_path):
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
    site = _site(
        tmp_path,
        {
            "jobs/a/trials.csv.gz": gzip.compress(f"trial,reward\nt1,1\nt2,{HF}\n".encode()),
            "jobs/a/card.png": _png_with_text("Comment", f"made with token {TOKEN}"),
            "static/key.txt": "header\n" + pem,
            "static/blob.bin": bytes(range(256)) * 4 + b"\n\nAKIAQWERTYUIOPASDFGH\n" + bytes(300),
        },
    )
    report = check_site(site)
    got = sorted((x.path, x.line, x.kind) for x in report.leaks)
    assert got == [
        ("jobs/a/card.png", 3, "github-token"),  # the PNG signature holds two newline bytes
        ("jobs/a/trials.csv.gz (decompressed)", 3, "hf-token"),
        (
            "static/blob.bin",
            7,
            "aws-access-key-id",
        ),  # a newline byte in each range(256), then "\n\n"
        ("static/key.txt", 2, "private-key"),
    ]
    out = _all_output(report)
    assert TOKEN not in out and HF not in out and "b3BlbnNzaC1rZXktdjEAAAA" not in out


def test_what_a_careless_user_packs_or_saves_otherwise_is_scanned_as_read(tmp_path):
    """A zip of logs, a bzip2 or xz file, a text Windows saved as UTF-16 ("Unicode text"),
    JSON whose writer escapes "/" (PHP's, Java's): none of their secrets shows in their
    bytes as stored, each shows to whoever downloads and opens the file."""
    import bz2
    import lzma
    import zipfile

    text = f"notes\nrun with {TOKEN}\n"
    packed = tmp_path / "logs.zip"
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("logs/readme.txt", "nothing\n")
        z.writestr("logs/page.html", f"<p>&#104;f_{HF[3:]}</p>")
        z.writestr(f"logs/{HF}.txt", "named with a token\n")
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "logs.zip": packed.read_bytes(),
            "a.txt.bz2": bz2.compress(text.encode()),
            "b.txt.xz": lzma.compress(text.encode()),
            "c.txt": text.encode("utf-16"),  # with its byte-order mark
            "d.csv": text.encode("utf-16-le"),  # without
            "e.json": '{"db": "postgres:\\/\\/admin:Sup3rS3cretPw@db\\/x"}',
            "f.zip": b"PK\x03\x04 not a zip",
        },
    )
    report = check_site(site, workers=1)
    got = sorted((x.path, x.line, x.kind) for x in report.leaks)
    assert got == [
        ("a.txt.bz2 (decompressed)", 2, "github-token"),
        ("b.txt.xz (decompressed)", 2, "github-token"),
        ("c.txt", 2, "github-token"),
        ("d.csv", 2, "github-token"),
        ("e.json", 1, "url-password"),
        ("logs.zip (its list of files)", 3, "hf-token"),
        ("logs.zip (logs/page.html)", 1, "hf-token"),
    ]
    assert report.blocked == [
        "f.zip: a zip file that cannot be read (File is not a zip file): not checked"
    ]
    out = _all_output(report)
    assert TOKEN not in out and HF not in out and "Sup3rS3cretPw" not in out


def test_every_stream_of_a_bzip2_gzip_or_xz_file_is_scanned(tmp_path):
    """pbzip2 and ``cat a.xz b.xz`` write several streams in one file (xz may pad between
    them with NULs); whoever opens it reads them all, so the gate reads them all too."""
    import bz2
    import gzip
    import lzma

    first, second = b"notes\n", f"run with {TOKEN}\n".encode()
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "a.txt.bz2": bz2.compress(first) + bz2.compress(second),
            "b.txt.xz": lzma.compress(first) + bytes(4) + lzma.compress(second) + bytes(8),
            "c.txt.gz": gzip.compress(first) + gzip.compress(second) + bytes(3),
        },
    )
    report = check_site(site, workers=1)
    got = sorted((x.path, x.line, x.kind) for x in report.leaks)
    assert got == [
        ("a.txt.bz2 (decompressed)", 2, "github-token"),
        ("b.txt.xz (decompressed)", 2, "github-token"),
        ("c.txt.gz (decompressed)", 2, "github-token"),
    ]
    assert report.blocked == []


def test_bytes_after_a_compressed_stream_that_start_none_stop_the_gate(tmp_path):
    """``bunzip2`` passes them over with a warning, but they are published as they are: a
    token written there raw would go out unread."""
    import bz2
    import lzma

    raw = f"junk {TOKEN}".encode()
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "a.txt.bz2": bz2.compress(b"notes\n") + raw,
            "b.txt.xz": lzma.compress(b"notes\n") + bytes(4) + raw,
            # another kind's stream: what reads the first does not read it
            "c.txt.bz2": bz2.compress(b"notes\n") + lzma.compress(raw),
        },
    )
    assert check_site(site, workers=1).blocked == [
        f"{name}: {kind} file that cannot be read (bytes after its stream 1 start {what}): "
        "not checked"
        for name, kind, what in (
            ("a.txt.bz2", "a bzip2", "no stream"),
            ("b.txt.xz", "an xz", "no stream"),
            ("c.txt.bz2", "a bzip2", "an xz stream"),
        )
    ]


def _gzip_member(body: bytes, extra: bytes = b"", name: bytes = b"", comment: bytes = b"") -> bytes:
    """One gzip member with the header fields asked for (RFC 1952), as gzip(1) and zlib's
    ``gzsetheader`` write them."""
    flags = (4 if extra else 0) | (8 if name else 0) | (16 if comment else 0)
    head = b"\x1f\x8b\x08" + bytes([flags]) + bytes(4) + b"\x00\x03"
    if extra:
        head += len(extra).to_bytes(2, "little") + extra
    head += (name + b"\0" if name else b"") + (comment + b"\0" if comment else b"")
    d = zlib.compressobj(wbits=-15)
    deflated = d.compress(body) + d.flush()
    return head + deflated + struct.pack("<II", zlib.crc32(body), len(body))


def test_a_gzip_members_stored_name_comment_and_extra_field_are_scanned(tmp_path):
    """A gzip member keeps the name of the file it was made from, a comment and an extra
    field beside its data (``gunzip -N`` restores the name, ``file`` and ``strings`` show
    them): a token there goes out with the file though nothing decompressed holds it. The
    fields are read as runs of text, each alone: one that looks like UTF-16 (a byte-order
    mark, NULs between bytes) decides nothing for another."""
    token, hf = TOKEN.encode(), HF.encode()
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "name.gz": _gzip_member(b"ok\n") + _gzip_member(b"ok\n", name=token + b".txt"),
            "comment.gz": _gzip_member(b"ok\n", name=b"x.txt", comment=b"by " + hf),
            "extra.gz": _gzip_member(b"ok\n", extra=b"AB\x10\x00key=" + hf),
            # cut in its name: whatever a reader gets of it is read
            "cut.gz": _gzip_member(b"", name=token + b".txt")[:60],
            "bom.gz": _gzip_member(b"ok\n", extra=b"\xff\xfeAB", name=token),
            "bom-first.gz": _gzip_member(b"ok\n", name=b"\xff\xfe") + _gzip_member(b"", name=token),
            "wide.gz": _gzip_member(b"ok\n", extra=b"a\0" * 4000, name=token),
            "plain.gz": _gzip_member(b"ok\n", name=b"trials.csv", comment=b"sitegen"),
        },
    )
    report = check_site(site, workers=1)
    got = sorted((x.path, x.line, x.kind) for x in report.leaks)
    assert got == [
        (f"{name}.gz (its header fields)", 1, kind)
        for name, kind in (
            ("bom-first", "github-token"),
            ("bom", "github-token"),
            ("comment", "hf-token"),
            ("cut", "github-token"),
            ("extra", "hf-token"),
            ("name", "github-token"),
            ("wide", "github-token"),
        )
    ]
    assert report.blocked == []
    assert gzip.decompress(_gzip_member(b"ok\n", b"AB\x00\x00", b"n", b"c")) == b"ok\n"


def _zipped(*members: tuple[str, bytes, dict], comment: bytes = b"", stored: bool = False) -> bytes:
    """A zip of ``(name, body, ZipInfo attributes)`` members, as ``zipfile`` writes it."""
    import io
    import zipfile

    buf = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, body, attrs in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            for k, v in attrs.items():
                setattr(info, k, v)
            z.writestr(info, body)
        z.comment = comment
    return buf.getvalue()


def _patched(data: bytes, old: bytes, new: bytes, count: int = 1) -> bytes:
    """``data`` with the first ``count`` of ``old`` made ``new`` (a header edited in place)."""
    assert len(old) == len(new) and data.count(old) >= count
    return data.replace(old, new, count)


def test_every_byte_of_a_zip_outside_its_members_is_scanned(tmp_path):
    """``unzip -z`` prints the archive's comment, ``zipinfo -v`` each member's comment and
    extra fields (Info-ZIP's Unicode path field holds a second name), ``unzip`` warns with a
    local header's name that differs from the directory's, ``strings`` shows what stands
    between and after the members: all of it goes out with the file. The names, read in the
    list of files, are not read again there."""
    token, hf = TOKEN.encode(), HF.encode()
    path_field = b"up" + (1 + len(token)).to_bytes(2, "little") + b"\x01" + token
    between = _zipped(("a.txt", b"ok\n", {}), ("b.txt", b"ok\n", {}), stored=True)
    cut = between.index(b"PK\x03\x04", 4)  # the second member's local header
    gap = b"\n" + token + b"\n"
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "a.zip": _zipped(("a.txt", b"ok\n", {}), comment=b"made with " + hf),
            "b.zip": _zipped(("a.txt", b"ok\n", {"comment": b"token " + token})),
            # the same field in the local and the central header: both read
            "c.zip": _zipped(("a.txt", b"ok\n", {"extra": path_field})),
            # a comment that starts as UTF-16 decides nothing for the next
            "d.zip": _zipped(("a.txt", b"ok\n", {"comment": token}), comment=b"\xff\xfe"),
            # in the local header alone (Python and the list read the central one)
            "e.zip": _patched(
                _zipped(
                    (
                        "a.txt",
                        b"ok\n",
                        {"extra": b"up" + len(token).to_bytes(2, "little") + b"A" * len(token)},
                    )
                ),
                b"A" * len(token),
                token,
            ),  # fmt: skip
            "f.zip": _zipped(("a.txt", b"ok\n", {})) + b"\n" + token + b"\n",
            "g.zip": between[:cut] + gap + between[cut:],  # (offsets no longer add up: ...)
            "h.zip": _zipped(("logs/", b"key " + token + b"\n", {})),  # a folder holding data
            "i.zip": _zipped(("a.txt", b"ok\n", {"comment": f"by {HF}".encode("utf-16-le")})),
            # a NUL in a stored name: zipfile's name stops there, the bytes go on
            "j.zip": _patched(_zipped((f"a.txtX{TOKEN}", b"ok\n", {})), b"a.txtX", b"a.txt\0", 2),
            "plain.zip": _zipped(("a.txt", b"ok\n", {"comment": b"first try"}), comment=b"run 7"),
        },
    )
    report = check_site(site, workers=1)
    got = sorted((x.path, x.kind) for x in report.leaks)
    assert got == [
        ("a.zip (its headers)", "hf-token"),
        ("b.zip (its headers)", "github-token"),
        ("c.zip (its headers)", "github-token"),
        ("c.zip (its headers)", "github-token"),
        ("d.zip (its headers)", "github-token"),
        ("e.zip (its headers)", "github-token"),
        ("f.zip (its headers)", "github-token"),
        ("h.zip (logs/)", "github-token"),
        ("i.zip (its headers)", "hf-token"),
        ("j.zip (its list of files)", "github-token"),
    ]
    assert report.blocked == [
        "g.zip: a zip file that cannot be read (Bad magic number for file header): not checked"
    ]


def test_a_gzip_members_header_fields_are_read_each_whole_and_no_more():
    """Each field as the header says: FEXTRA by its length, FNAME and FCOMMENT to their NUL,
    FHCRC's two bytes passed over, a field the flags do not name left unread (what follows
    the header is the compressed data), and a field cut short is what the file holds."""
    name, comment, extra = b"trials.csv", b"a note", b"AB\x02\x00xy"
    both = _gzip_member(b"ok\n", extra=extra, name=name, comment=comment)
    crc = bytearray(_gzip_member(b"ok\n", name=name))
    crc[3] |= 2  # FHCRC: a CRC of the header after it (zlib checks it: not asked to here)
    crc[10 + len(name) + 1 : 10 + len(name) + 1] = b"\x00\x00"
    cases = [
        (_gzip_member(b"ok\n"), []),
        (_gzip_member(b"ok\n", name=name), [name]),
        (_gzip_member(b"ok\n", comment=comment), [comment]),
        (_gzip_member(b"ok\n", extra=extra), [extra]),
        (both, [extra, name, comment]),
        (bytes(crc), [name]),
        (both[: 10 + 2 + len(extra) + 4], [extra, name[:4]]),  # cut in the name
        (both[: 10 + 2 + 3], [extra[:3]]),  # cut in the extra field
        (both[:3], []),
    ]
    for data, fields in cases:
        assert scan._gzip_fields(data, [0]) == fields, data
    second = len(both)
    two = both + _gzip_member(b"", name=b"second.txt")
    assert scan._gzip_fields(two, [0, second]) == [extra, name, comment, b"second.txt"]


def test_a_zips_headers_are_every_byte_but_its_names_and_members_data(tmp_path):
    """What is read as "(its headers)" is the zip less each name (in its local and central
    header: read in the list) and each member's data (read as the member): told here by
    finding those unique bytes, not by reading the headers as the gate does."""
    extra = b"up" + (4).to_bytes(2, "little") + b"EXTR"
    members = [
        ("first-name.txt", b"FIRST-DATA", {"extra": extra, "comment": b"first comment"}),
        ("second-name.txt", b"SECOND-DATA", {}),
        ("third-name/", b"", {}),
    ]
    data = _zipped(*members, comment=b"archive comment", stored=True)
    spans = []
    for name, body, _ in members:
        at = data.find(name.encode())
        spans.append((at, at + len(name)))
        at = data.find(name.encode(), at + 1)
        spans.append((at, at + len(name)))
        if body:
            at = data.find(body)
            spans.append((at, at + len(body)))
    gaps, pos = [], 0
    for a, b in sorted(spans):
        gaps.append(data[pos:a])
        pos = b
    gaps.append(data[pos:])
    got = scan._unpacked(data, "z.zip", "z.zip", Redactor())
    assert got[0] == (
        b"first-name.txt\nsecond-name.txt\nthird-name/",
        "z.zip (its list of files)",
        "z.zip",
        False,
    )
    assert [(p[0], p[1]) for p in got[1:-1]] == [
        (b"FIRST-DATA", "z.zip (first-name.txt)"),
        (b"SECOND-DATA", "z.zip (second-name.txt)"),
        (b"", "z.zip (third-name/)"),
    ]
    assert got[-1] == (b"\0".join(g for g in gaps if g), "z.zip (its headers)", "z.zip", True)
    assert b"archive comment" in got[-1][0] and got[-1][0].count(b"EXTR") == 2


def test_a_zip_that_hides_a_member_or_cannot_be_read_stops_the_gate(tmp_path):
    """What the gate would pass unread stops it: a member the zip's directory does not list
    (``zip -FF`` recovers it), a member encrypted or packed by a method Python lacks, a
    version of the format it lacks, a local header whose name differs from the directory's
    (its name, a token here, masked in the message)."""
    import zipfile

    token = TOKEN.encode()
    two = _zipped(("a.txt", b"ok\n", {}), ("s.txt", b"key " + token + b"\n", {}))
    central = two.index(b"PK\x01\x02")
    second = two.index(b"PK\x01\x02", central + 4)
    end = bytearray(two[two.index(b"PK\x05\x06") :])
    struct.pack_into("<HHII", end, 8, 1, 1, second - central, central)  # lists one member
    one = _zipped(("a.txt", b"ok\n", {}))
    local, listed = one.index(b"PK\x03\x04"), one.index(b"PK\x01\x02")
    encrypted, method, version = bytearray(one), bytearray(one), bytearray(one)
    encrypted[local + 6] |= 1  # the flag bit "encrypted", in both headers
    encrypted[listed + 8] |= 1
    struct.pack_into("<H", method, local + 8, 99)  # compression method 99 (AES), in both
    struct.pack_into("<H", method, listed + 10, 99)
    struct.pack_into("<H", version, listed + 6, 99)  # "version needed to extract": 9.9
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "hidden.zip": two[:central] + two[central:second] + bytes(end),
            # the same member unlisted in front of a listed one, between their headers
            "hidden-first.zip": _hidden_in_front(),
            "encrypted.zip": bytes(encrypted),
            "method.zip": bytes(method),
            "version.zip": bytes(version),
            "named.zip": _patched(_zipped(("n" * 40, b"ok\n", {})), b"n" * 40, token[:40]),
        },
    )
    with pytest.raises(NotImplementedError):  # (Python's zipfile lacks the method)
        zipfile.ZipFile(site / "method.zip").read("a.txt")
    report = check_site(site, workers=1)
    assert report.leaks == []
    blocked = dict(line.split(": ", 1) for line in report.blocked)
    for name in ("hidden.zip", "hidden-first.zip"):
        assert blocked[name] == (
            "a zip file that cannot be read (it holds a member its list of files does not "
            "name): not checked"
        )
    assert "encrypted" in blocked["encrypted.zip"]
    assert "not supported" in blocked["method.zip"]
    assert "version 9.9" in blocked["version.zip"]
    assert "[REDACTED]" in blocked["named.zip"] and TOKEN not in _all_output(report)


def _hidden_in_front() -> bytes:
    """A zip of one listed member with a second member's local header and data, which no
    directory entry names, before the listed one's (offsets moved to match)."""
    hidden = _zipped(("s.txt", b"key " + TOKEN.encode(), {}))
    hidden = hidden[: hidden.index(b"PK\x01\x02")]
    one = bytearray(_zipped(("a.txt", b"ok\n", {})))
    listed = one.index(b"PK\x01\x02")
    struct.pack_into("<I", one, listed + 42, len(hidden))  # the member's local header
    end = one.index(b"PK\x05\x06")
    struct.pack_into("<I", one, end + 16, listed + len(hidden))  # the directory's start
    return hidden + bytes(one)


def test_archives_inside_archives_are_read_to_a_depth_and_a_size_over_every_level(
    tmp_path, monkeypatch
):
    """A jar's ``.gz``, a zip of logs, a ``.tar.gz``'s gzip of a zip: each piece that is
    packed itself is unpacked in turn, to eight levels (a zip that holds itself never
    ends) and :data:`GZIP_MAX_BYTES` over all of them."""
    token = TOKEN.encode()
    deep = b"key " + token
    for _ in range(9):
        deep = gzip.compress(deep)
    site = _site(
        tmp_path,
        {
            "index.html": "<p>ok</p>",
            "zip.gz": gzip.compress(_zipped(("s.txt", b"key " + token, {}))),
            "gz.zip": _zipped(("s.gz", gzip.compress(b"key " + token), {}), stored=True),
            "deep.gz": deep,
            "wide.zip": _zipped(*((f"{i}.gz", gzip.compress(bytes(8000)), {}) for i in range(3))),
        },
    )
    monkeypatch.setattr(scan, "GZIP_MAX_BYTES", 20_000)  # (each level holds less)
    report = check_site(site, workers=1)
    assert sorted((x.path, x.kind) for x in report.leaks) == [
        ("gz.zip (s.gz) (decompressed)", "github-token"),
        ("zip.gz (decompressed) (s.txt)", "github-token"),
    ]
    assert sorted(report.blocked) == [
        "deep.gz: a gzip file that cannot be read (it is packed more than 8 deep): not checked",
        "wide.zip: a zip file that cannot be read (it inflates past 0 MB): not checked",
    ]


def test_ascii_after_a_utf16_byte_order_mark_is_read_as_the_bytes_show_it(tmp_path):
    """A byte-order mark makes the file UTF-16 to a browser, but ``cat``, ``strings`` and
    a downloader see the ASCII after it: read both ways."""
    site = _site(tmp_path, {"index.html": "<p>ok</p>", "a.txt": b"\xff\xferun " + TOKEN.encode()})
    assert [(x.path, x.kind) for x in check_site(site, workers=1).leaks] == [
        ("a.txt", "github-token")
    ]


@pytest.mark.parametrize(
    ("text", "spans", "which", "excerpt"),
    [
        ("line one\nthe token XXXX here\nnext", [(19, 23)], 0, "the token [REDACTED] here"),
        # a binary file's runs are joined by NULs: a run is a line
        ("run1 aaaa\0run2 XXXX tail\0run3", [(15, 19)], 0, "run2 [REDACTED] tail"),
        # 40 characters each side of a finding on a long line, cut ends marked
        ("p" * 100 + "XXXX" + "q" * 100, [(100, 104)], 0, f"…{'p' * 40}[REDACTED]{'q' * 40}…"),
        ("a XXXX b YYYY c", [(2, 6), (9, 13)], 1, "a [REDACTED] b [REDACTED] c"),
        ("\x1b[31mXXXX\x07 end", [(5, 9)], 0, ".[31m[REDACTED]. end"),
        ("XXXX tail\nz", [(0, 4)], 0, "[REDACTED] tail"),
        # a long finding that reaches into the excerpt is masked too, not shown in part
        ("a" * 30 + "L" * 120 + "b" * 10 + "XXXX" + "c", [(30, 150), (160, 164)], 1,
         "…[REDACTED]bbbbbbbbbb[REDACTED]c"),
    ],
)  # fmt: skip
def test_an_excerpt_is_its_line_near_the_finding_with_every_finding_masked(
    text, spans, which, excerpt
):
    from collections import namedtuple

    found = [namedtuple("Finding", "start end")(a, b) for a, b in spans]
    starts, ends = [f.start for f in found], [f.end for f in found]
    f = found[which]
    assert scan._excerpt(text, f.start, f.end, found, starts, ends) == excerpt


def _wide(text: str, high_nuls: int, low_nuls: int = 0, big: bool = False) -> bytes:
    """UTF-16-like bytes of ``text``: the first ``high_nuls`` characters' high bytes NUL
    (the rest 0x01), the first ``low_nuls`` characters' low bytes NUL too; little-endian
    unless ``big``."""
    out = b""
    for i, c in enumerate(text):
        low = b"\0" if i < low_nuls else c.encode()
        high = b"\0" if i < high_nuls else b"\x01"
        out += high + low if big else low + high
    return out


def test_utf16_and_utf32_are_told_by_their_mark_or_every_other_byte_nul():
    """A byte-order mark says UTF-32 (four bytes) or UTF-16 (two); without one, more than
    nine in ten of the high bytes NUL and fewer than one in ten of the low bytes say UTF-16
    in that order, from 16 bytes on, read in the first 8000 bytes; else it is not UTF-16."""
    text = "run with the token x"  # (20 characters)
    told = scan._utf16
    assert told("\ufeff".encode("utf-32-le") + text.encode("utf-32-le")) == text
    assert told("\ufeff".encode("utf-32-be") + text.encode("utf-32-be")) == text
    assert told(b"\xff\xfe" + text.encode("utf-16-le")) == text
    assert told(b"\xfe\xff" + text.encode("utf-16-be")) == text
    assert told(text.encode("utf-16-le")) == text
    assert told(text.encode("utf-16-be")) == text
    assert told(text[:8].encode("utf-16-le")) == text[:8]  # 16 bytes
    assert told(text[:7].encode("utf-16-le")) is None  # 14 bytes: too few to tell
    assert told(text.encode()) is None and told(b"") is None
    # 19 of 20 high bytes NUL (95 %) is UTF-16, 18 (90 %) is not; a low byte NUL in 1 of 20
    # (5 %) still is, 2 (10 %) not
    for big in (False, True):
        assert told(_wide(text, 19, big=big)) is not None
        assert told(_wide(text, 18, big=big)) is None
        assert told(_wide(text, 20, 1, big=big)) is not None
        assert told(_wide(text, 20, 2, big=big)) is None
    # only the first 8000 bytes tell: ASCII after them does not undo it
    assert told(text.encode("utf-16-le") * 400 + b"ascii" * 2000) is not None


def test_a_transcript_script_is_read_decoded_with_the_transcript_rules(tmp_path):
    """A transcript's data script is its record gzip'ed and base64'ed: read decoded, with
    the rules its text was redacted by (a private address too, which a page may show), on
    one line; an allowed value is counted, not reported; one that cannot be decoded is not
    checked, so not published."""
    import re

    from sitegen.present.transcripts import encode

    record = {"turns": [{"output": f"curl http://10.0.3.17:8000/v1 then {HF}"}]}
    site = _site(
        tmp_path,
        {
            "t/transcript.js": encode("a-slug", record),
            "u/transcript.js": 'sitegen.transcript("x", "bm90IGd6aXA=");\n',
        },
    )
    redactor = Redactor()
    scanned, leaks, allowed, blocked = scan.scan_file(site, "t/transcript.js", redactor, ())
    assert scanned is not None and scanned.rel == "t/transcript.js" and blocked is None
    assert sorted((x.path, x.line, x.kind) for x in leaks) == [
        ("t/transcript.js (decompressed)", 1, "hf-token"),
        ("t/transcript.js (decompressed)", 1, "private-address"),
    ]
    assert allowed == 0 and HF not in str(leaks) and "10.0.3.17" not in str(leaks)
    allow = (re.compile(r"10\.0\.3\.17:8000"),)
    _, leaks, allowed, _ = scan.scan_file(site, "t/transcript.js", redactor, allow)
    assert [x.kind for x in leaks] == ["hf-token"] and allowed == 1
    assert scan.scan_file(site, "u/transcript.js", redactor, ())[1:] == (
        [],
        0,
        "u/transcript.js: a transcript script that cannot be read: not checked",
    )


def test_a_file_of_many_findings_is_scanned_in_time_linear_in_its_size():
    """Each finding's line and excerpt are found near it, not from the file's start."""
    from tests.linear_time import assert_each_linear

    setup = f"""
from sitegen.publish import scan
from sitegen.redact import Redactor
R, T = Redactor(), {TOKEN!r}
"""
    work = """
unit = (T + {"line": " ", "lines": "\\n", "runs": "\\0"}[case]).encode()
return len(scan._scan_bytes(unit * (n // len(unit)), "x", "x.txt", R, ())[0])
"""
    assert_each_linear(setup, work, ["line", "lines", "runs"])


def test_a_stream_cut_short_gives_all_it_holds_wherever_the_output_stops(monkeypatch):
    """A call that stops at its output bound just as the input runs out leaves output in
    zlib: it is taken too, as ``gzip -dc`` prints it."""
    import bz2
    import gzip
    import lzma

    monkeypatch.setattr(scan, "_OUT", 700)
    text = b"".join(b"line %d run with token\n" % i for i in range(400))
    for kind, compress in (("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)):
        data = compress(text)
        for cut in range(len(data) // 2, len(data)):
            got, _ = scan._inflate(scan._DECOMPRESSOR[kind], data[:cut])
            if kind == "gzip":
                d = zlib.decompressobj(wbits=31)
                assert got == d.decompress(data[:cut]) + d.flush(), cut
            assert text.startswith(got), (kind, cut)


def test_the_inflated_size_is_bounded_over_every_stream(monkeypatch):
    import bz2
    import gzip
    import lzma

    monkeypatch.setattr(scan, "GZIP_MAX_BYTES", 10_000)
    for kind, compress in (("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress)):
        data = compress(b"0" * 3000) * 3
        assert len(scan._inflate(scan._DECOMPRESSOR[kind], data)[0]) == 9000
        with pytest.raises(ValueError, match="inflates past"):
            scan._inflate(scan._DECOMPRESSOR[kind], data + compress(b"0" * 3000))


def test_a_file_of_many_small_streams_is_read_in_time_linear_in_its_size():
    """What a decompressor holds past its stream's end is copied: given the whole rest of
    the file each time, many small streams would copy it over and over."""
    from tests.linear_time import assert_each_linear

    setup = "import bz2, gzip, lzma\nfrom sitegen.publish import scan"
    work = """
compress = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[case]
one = compress(b"")
return len(scan._inflate(scan._DECOMPRESSOR[case], one * (n // len(one)))[0])
"""
    assert_each_linear(setup, work, ["gzip", "bzip2", "xz"], 1 << 16, 1 << 20)


def test_user_redact_patterns_are_rules_too(tmp_path):
    site = _site(tmp_path, {"index.html": "<p>cluster CORP-123456 down</p>\n"})
    assert check_site(site).ok
    report = check_site(site, Redactor((r"CORP-\d{6}",)))
    assert [(x.path, x.kind) for x in report.leaks] == [("index.html", "user-pattern:1")]


def test_allow_pattern_lets_one_value_through(tmp_path):
    fake = "sk-" + "test0000000000000000000000docs"
    site = _site(tmp_path, {"docs.html": f"<code>{fake}</code>\n<code>{TOKEN}</code>\n"})
    report = check_site(site, allow=[r"sk-test0+docs"])
    assert report.allowed == 1
    assert [x.kind for x in report.leaks] == ["github-token"]
    assert check_site(site, allow=[r"sk-test0+docs", TOKEN]).ok


@pytest.mark.parametrize("pattern", [".*", ".+", r"\S+", r"[A-Za-z0-9_]+", "ghp_.*", "(?s).*|x"])
def test_blanket_allow_patterns_are_refused(pattern):
    with pytest.raises(ConfigError, match="would allow any value"):
        compile_allow([pattern])


def test_invalid_allow_pattern(tmp_path):
    with pytest.raises(ConfigError, match="invalid"):
        compile_allow(["(unclosed"])


def test_sizes(tmp_path, monkeypatch):
    site = _site(tmp_path, {"index.html": "<p>hi</p>\n", "half.bin": b"\0" * 3000})
    with open(site / "big.bin", "wb") as fh:  # sparse: costs no disk, and is never read
        fh.truncate(101 * 10**6)
    report = check_site(site)
    assert not report.ok and report.leaks == [] and report.warnings == []
    assert report.blocked[0] == "big.bin: 101.0 MB, over GitHub's limit of 100.0 MB a file"
    assert report.blocked[1].startswith("largest files: big.bin (101.0 MB), half.bin (3.0 kB)")

    os.remove(site / "big.bin")
    monkeypatch.setattr(gate, "FILE_WARN_BYTES", 2000)
    report = check_site(site)
    assert report.ok  # a warning does not stop it
    assert [w.split(":")[0] for w in report.warnings] == ["half.bin"]
    monkeypatch.setattr(gate, "SITE_LIMIT_BYTES", 2500)
    report = check_site(site)
    assert not report.ok
    assert report.blocked == [
        "the site is 3.0 kB, over GitHub Pages' limit of 2.5 kB; largest files: "
        "half.bin (3.0 kB), index.html (10 bytes)"
    ]


def test_what_is_published(tmp_path):
    """Everything in the folder but a worktree's .git and sitegen's manifest; links stop it."""
    site = _site(
        tmp_path,
        {
            "index.html": "x",
            MARKER: "{}",
            ".git": "gitdir: /elsewhere",
            ".nojekyll": "",
            "CNAME": "example.org\n",
            "sub/.git/config": "[core]",
            "sub/page.html": "y",
        },
    )
    assert site_files(site) == [".nojekyll", "CNAME", "index.html", "sub/page.html"]
    os.symlink("/etc/passwd", site / "sub/passwd")
    report = check_site(site)
    assert report.blocked == [
        "sub/passwd: a symbolic link (GitHub Pages does not serve links: copy the file in)"
    ]


def test_parallel_scan_equals_serial(tmp_path, monkeypatch):
    files = {f"p{i}.txt": f"line\n{TOKEN if i % 3 == 0 else 'clean'}\n" for i in range(9)}
    site = _site(tmp_path, files)
    serial = check_site(site, workers=1)
    monkeypatch.setattr(gate, "_PARALLEL_BYTES", 0)
    parallel = check_site(site, workers=2)
    assert serial.leaks == parallel.leaks and len(serial.leaks) == 3
    assert serial.files == parallel.files


def test_clean_cache_skips_only_unchanged_bytes(tmp_path):
    site = _site(tmp_path, {f"p{i}.html": f"<p>page {i}</p>\n" for i in range(5)})
    cache = tmp_path / ".site.cache" / "publish-gate.json"
    first = check_site(site, clean_cache=cache)
    assert first.ok and first.known_clean == 0 and cache.exists()
    second = check_site(site, clean_cache=cache)
    assert second.ok and second.known_clean == 5 and second.files == first.files
    (site / "p3.html").write_text(f"<p>{TOKEN}</p>\n")
    third = check_site(site, clean_cache=cache)
    assert third.known_clean == 4 and [(x.path, x.kind) for x in third.leaks] == [
        ("p3.html", "github-token")
    ]
    # a file with a finding is never remembered as clean
    assert check_site(site, clean_cache=cache).known_clean == 4
    # the same bytes under a non-HTML name are read another way: not the same entry
    (site / "p0.txt").write_bytes((site / "p0.html").read_bytes())
    assert check_site(site, clean_cache=cache).known_clean == 4
    # other rules (a user pattern): everything is scanned again, and found
    other = check_site(site, Redactor((r"page 1\b",)), clean_cache=cache)
    assert other.known_clean == 0 and len(other.leaks) == 2
    cache.write_text("{not json")
    assert check_site(site, clean_cache=cache).known_clean == 0


def test_a_fifo_planted_as_the_clean_record_does_not_hang(tmp_path):
    import os
    import threading

    site = _site(tmp_path, {"p.html": "<p>page</p>\n"})
    cache = tmp_path / ".site.cache" / "publish-gate.json"
    cache.parent.mkdir()
    os.mkfifo(cache)
    done: list = []
    t = threading.Thread(target=lambda: done.append(check_site(site, clean_cache=cache)))
    t.daemon = True  # if the record were opened, the thread would block forever
    t.start()
    t.join(20)
    assert done and done[0].ok and done[0].known_clean == 0


def test_check_site_command(tmp_path, capsys):
    from sitegen.commands.cli import main

    fake = "sk-" + "test0000000000000000000000docs"
    site = _site(tmp_path, {"index.html": "<p>ok</p>\n", "howto.html": f"<code>{fake}</code>\n"})
    assert main(["check-site", str(site)]) == 2
    err = capsys.readouterr().err
    assert "leak: howto.html:1: openai-key: <code>[REDACTED]</code>" in err and fake not in err
    cfg = tmp_path / "sitegen.toml"
    cfg.write_text("publish_allow = ['sk-test0+docs']\n")
    assert main(["check-site", str(site), "--config", str(cfg)]) == 0
    assert "1 allowed by publish_allow" in capsys.readouterr().err
    cfg.write_text("publish_allow = ['.*']\n")
    assert main(["check-site", str(site), "--config", str(cfg)]) == 2
    assert "would allow any value" in capsys.readouterr().err
    assert main(["check-site", str(tmp_path / "missing")]) == 2


def test_secret_in_a_file_name(tmp_path):
    site = _site(tmp_path, {f"shared/{TOKEN}/index.html": "<p>hi</p>\n"})
    report = check_site(site)
    assert [str(x) for x in report.leaks] == [
        "shared/[REDACTED]/index.html: github-token: in the file name"
    ]


def test_a_secret_in_a_name_is_masked_in_every_line_of_the_report(tmp_path):
    """A leak inside a file, a link or a broken gzip whose name holds a token: every line
    names the file with the token masked, never the token itself."""
    site = _site(
        tmp_path,
        {
            f"notes-{HF}.txt": "password: hunter2\n",
            f"d-{TOKEN}/x.txt": "ok\n",
            f"bad-{HF}.gz": b"\x1f\x8bnot gzip",
        },
    )
    os.symlink("/etc/hostname", site / f"link-{HF}")
    report = check_site(site, workers=1)
    out = _all_output(report)
    assert HF not in out and TOKEN not in out and HF[:12] not in out, out
    assert "notes-[REDACTED].txt:1: secret-assignment: password: [REDACTED]" in out
    assert "link-[REDACTED]: a symbolic link" in out and "bad-[REDACTED].gz: a gzip" in out


def test_odd_file_names(tmp_path):
    site = _site(tmp_path, {"a\nb.html": "x", "caf\u00e9.html": "y"})
    report = check_site(site)
    assert report.blocked == ["'a\\nb.html': a line break in a file name: rename it"]
    assert [f.rel for f in report.files] == ["caf\u00e9.html"]
