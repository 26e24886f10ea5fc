import io

from sitegen.read.lines import MAX_LINE_BYTES, iter_raw_lines, split_line


def lines(data: bytes, chunk: int = 7):
    return list(iter_raw_lines(io.BytesIO(data), chunk_size=chunk))


def test_cr_and_crlf_are_line_breaks_across_chunks():
    got = [raw for _, raw, _ in lines(b"a\r\nb\rc\nd", chunk=2)]
    assert got == [b"a", b"b", b"c", b"d"]


def test_huge_line_is_cut_and_flagged_without_holding_it():
    data = b"x" * (MAX_LINE_BYTES + 10) + b"\nnext\n"
    got = lines(data, chunk=1 << 16)
    assert got[0][2] is True and len(got[0][1]) == MAX_LINE_BYTES
    assert got[1] == (2, b"next", False)


def test_coloured_ray_prefix_and_loguru_header():
    raw = (
        b"\x1b[36m(skyrl_entrypoint pid=4242)\x1b[0m \x1b[32m2026-02-08 00:56:50.123\x1b[0m | "
        b"\x1b[1mINFO    \x1b[0m | \x1b[36mskyrl_train.utils.tracking:log:208\x1b[0m - \x1b[1mStep 48: \x1b[0m"
    )
    ln = split_line(1, raw)
    assert ln.emitter == "loguru" and ln.pid == "4242" and ln.ip is None
    assert ln.message == "Step 48: "
    assert ln.time.year == 2026 and ln.time.microsecond == 123000


def test_vllm_line_with_ip_and_engine_core_group_and_dedup():
    raw = (
        b"(AsyncVLLMInferenceEngine pid=287294, ip=10.128.26.194) (EngineCore_DP0 pid=9) INFO 02-08 00:56:50 "
        b"[loggers.py:127] Engine 000: Avg prompt throughput: 1.0 tokens/s [repeated 7x across cluster]"
    )
    ln = split_line(1, raw)
    assert (ln.emitter, ln.pid, ln.ip, ln.repeated) == ("vllm", "287294", "10.128.26.194", 7)
    assert ln.vllm_time == "02-08 00:56:50"
    assert ln.message.startswith("Engine 000:") and "repeated" not in ln.message


def test_other_prefixes_and_invalid_utf8():
    assert split_line(1, b"(raylet) hello").message == "hello"
    assert split_line(1, b"(autoscaler +1m2s) Adding node").message == "Adding node"
    ln = split_line(1, b"\xff\xfe bad \x00 bytes")
    assert "\x00" not in ln.message and "\ufffd" in ln.message
