"""Accumulator payloads: everything a payload declares is checked before anything is allocated."""

from __future__ import annotations

import functools
import io
import json
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import precall


def _arrays(acc: precall.Accumulator) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(acc.to_bytes())) as npz:
        return {k: npz[k] for k in npz.files}


def _payload(arrays: dict[str, np.ndarray], meta: dict | None = None) -> bytes:
    arrays = dict(arrays)
    if meta is not None:
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


BASE = precall.Accumulator().update([0, 1, 1, 0], [0.3, 0.2, 0.9, 0.5])
META = {"format": "precall.Accumulator", "version": 1, "pos_label": None, "labels": None, "binned": False}


@functools.lru_cache(maxsize=1)
def _bad_cases() -> dict[str, bytes]:
    a = _arrays(BASE)
    cases = {
        "infinite counts": _payload({**a, "pos_0": np.array([np.inf, 0, 1, 0.0])}),
        "uint64 counts": _payload({**a, "pos_0": a["pos_0"].astype(np.uint64) + np.uint64(2**63),
                                   "neg_0": a["neg_0"].astype(np.uint64)}),
        "string labels array": _payload({**a, "scores_0": np.array(["a", "b", "c", "d"])}),
        "labels duplicated": _payload(a, {**META, "labels": ["a", "a"]}),
        "labels nested": _payload(a, {**META, "labels": [["a"], ["b"]]}),
        "labels mixed": _payload(a, {**META, "labels": ["a", 1]}),
        "pos_label dict": _payload(a, {**META, "pos_label": {"x": 1}}),
        "binned without edges": _payload(a, {**META, "binned": True}),
        "version True": _payload(a, {**META, "version": True}),
        "unknown field": _payload(a, {**META, "extra": 1}),
        "5e6 labels declared": _payload(a, {**META, "labels": list(range(5_000_000))}),
        "missing table": _payload({k: v for k, v in a.items() if k != "neg_0"}),
        "unsorted scores": _payload({**a, "scores_0": a["scores_0"][::-1].copy()}),
        "2-D array": _payload({**a, "pos_0": np.zeros((2, 2))}),
    }
    return cases


@pytest.mark.parametrize("case", sorted(_bad_cases()))
def test_inconsistent_payloads_are_refused(case):
    with pytest.raises(ValueError, match="payload"):
        precall.Accumulator.from_bytes(_bad_cases()[case])


def test_valid_payloads_still_round_trip():
    for acc in (BASE, precall.Accumulator(labels=["a", "b"]).update([[1, 0], [0, 1]], [[0.2, 0.4], [0.6, 0.1]]),
                precall.Accumulator(bins=4, score_range=(0, 1)).update([0, 1, 1], [0.1, 0.5, 0.9])):
        again = precall.Accumulator.from_bytes(acc.to_bytes())
        assert repr(again) == repr(acc)


def _deflate_bomb(declared: int) -> bytes:
    """A zip whose one member inflates to ``declared`` bytes of zeros, behind a valid .npy header."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (declared // 8,)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("scores_0.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            chunk = bytes(1 << 20)
            for _ in range(declared >> 20):
                member.write(chunk)
        z.writestr("meta.npy", b"")
    return buffer.getvalue()


def test_a_deflate_bomb_is_refused_before_it_is_inflated():
    """A small payload declaring 256 MiB (the issue's bomb declared 2 GB; the check is the same and
    does not depend on the size): refused from the zip directory, in bounded memory."""
    script = textwrap.dedent(f"""
        import io, resource, sys, zipfile
        sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        from test_payloads import _deflate_bomb
        import precall
        payload = _deflate_bomb(256 << 20)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            precall.Accumulator.from_bytes(payload)
        except ValueError as exc:
            print("refused", len(payload), str(exc)[:80])
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("grew_kb", after - before)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0].startswith("refused") and "compressed" in lines[0]
    assert int(lines[0].split()[1]) < 1 << 20  # the payload itself is small
    grew_kb = int(lines[1].split()[1])
    assert grew_kb < 100 * 1024  # under 100 MB
