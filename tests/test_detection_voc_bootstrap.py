"""VOC intervals over images: a replicate equals re-evaluating the resampled images."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from precall import detection


def _resampled(data, counts):
    """The images taken counts[i] times, each copy an image of its own (id 'name#k')."""
    images = data.images.tolist()
    g_rows, d_rows, g_ids, d_ids, new_images = [], [], [], [], []
    for i, image in enumerate(images):
        g = np.flatnonzero(data.gt_image == image)
        d = np.flatnonzero(data.dt_image == image)
        for k in range(int(counts[i])):
            name = f"{image}#{k}"
            new_images.append(name)
            g_rows.append(g), d_rows.append(d)
            g_ids += [name] * g.size
            d_ids += [name] * d.size
    g_idx = np.concatenate(g_rows) if g_rows else np.zeros(0, dtype=np.int64)
    d_idx = np.concatenate(d_rows) if d_rows else np.zeros(0, dtype=np.int64)
    out = data._take(g_idx, d_idx)
    return dataclasses.replace(out, images=np.array(sorted(new_images), dtype=object),
                               gt_image=np.array(g_ids, dtype=object), dt_image=np.array(d_ids, dtype=object))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("method", ["voc2010", "voc2007", "step"])
def test_a_replicate_equals_re_evaluating_the_resampled_images(shared_data_dir, seed, method):
    folder = shared_data_dir / "odm_test_case_1"
    data = detection.load_text(str(folder / "gts"), str(folder / "dets"))
    ev = detection.evaluate_voc(data, method=method, ties="group", pixel_offset=0, inclusive=True, iou_threshold=0.3)
    counts = np.random.default_rng(seed).multinomial(len(data.images), np.full(len(data.images),
                                                                                1 / len(data.images)))
    mean, per_class = ev.replicate(counts)
    again = detection.evaluate_voc(_resampled(data, counts), method=method, ties="group", pixel_offset=0,
                                   inclusive=True, iou_threshold=0.3)
    assert mean == pytest.approx(again.map, abs=1e-12, nan_ok=True)
    for cls, value in per_class.items():
        assert value == pytest.approx(again.ap[cls], abs=1e-12)


def test_voc_intervals(shared_data_dir):
    folder = shared_data_dir / "odm_toyexample"
    data = detection.load_voc(str(folder / "gts_vocxml"), str(folder / "dets_classname_abs_xywh"), box_format="xywh")
    ev = detection.evaluate_voc(data)
    result = ev.bootstrap(300, random_state=0)
    low, high = result["mAP"]
    assert low <= ev.map <= high and 0 <= low < high <= 1
    assert set(result["per_class"]) == set(ev.ap)
    assert ev.replicate(np.ones(len(data.images), dtype=int))[0] == ev.map  # all images once: the estimate
    with pytest.raises(ValueError, match="counts"):
        ev.replicate([1, 2])
    with pytest.raises(ValueError, match="n_resamples"):
        ev.bootstrap(1)


def test_voc_intervals_carry_their_seed_and_say_it(shared_data_dir, tmp_path, capsys, monkeypatch):
    from precall.cli import main

    folder = shared_data_dir / "odm_toyexample"
    args = [str(folder / "gts_vocxml"), str(folder / "dets_classname_abs_xywh")]
    ev = detection.evaluate_voc(detection.load_voc(*args, box_format="xywh"))
    result = ev.bootstrap(40, random_state=3)
    assert isinstance(result, detection.VocBootstrap) and result.seed == 3 and result.n_resamples == 40
    assert result["mAP"] == result.intervals["mAP"] and result["per_class"] is result.per_class
    assert result.to_text().splitlines()[-1] == " (40 resamples, seed 3)"
    assert ev.bootstrap(40, random_state=np.random.default_rng(3)).seed is None
    # the command prints the result's seed (one source): a result seeded otherwise shows it
    real = detection.bootstrap_voc  # what VocEvaluation.bootstrap calls
    monkeypatch.setattr(detection, "bootstrap_voc", lambda *a, **k: real(*a, **{**k, "random_state": 11}))
    for extra in ([], ["--json"]):
        assert main(["detection", "voc", *args, "--box-format", "xywh", "--ci", "--n-resamples", "40", *extra]) == 0
        out = capsys.readouterr().out
        assert "seed 11" in out and "seed 0" not in out


def test_progress_is_reported_and_changes_nothing(shared_data_dir):
    folder = shared_data_dir / "odm_test_case_1"
    ev = detection.evaluate_voc(detection.load_text(str(folder / "gts"), str(folder / "dets")))
    seen: list[float] = []
    with_progress = ev.bootstrap(40, random_state=2, progress=seen.append)
    assert len(seen) == 40 and seen[-1] == 1.0 and seen == sorted(seen)
    plain = ev.bootstrap(40, random_state=2)
    assert np.array_equal(with_progress.replicates, plain.replicates, equal_nan=True)
    assert with_progress.intervals == plain.intervals
