"""Calibration agreement on small cases computed by hand."""

from __future__ import annotations

import pytest

from curation.qc.agreement import agreement, cohen_kappa, krippendorff_alpha


def test_alpha_by_hand():
    # items u1..u4; u4 has one answer only (not pairable). Values 0,0 | 1,1 | 0,1 -> n0 = n1 = 3, n = 6;
    # observed disagreement 2/6, expected 2*3*3/(6*5) = 0.6, alpha = 1 - (1/3)/0.6 = 0.4444
    answers = {"ann": {"u1": "A", "u2": "B", "u3": "A", "u4": None},
               "bob": {"u1": "A", "u2": "B", "u3": "B", "u4": "A"}}
    assert krippendorff_alpha(answers) == pytest.approx(0.4444, abs=1e-4)


def test_kappa_by_hand_and_missing_is_not_a_category():
    # both answered i1..i4: agree on i1, i2, i4; po = 3/4; ann A,A,B,B; bob A,B,B,B:
    # pe = (2*1 + 2*3) / 16 = 0.5 -> kappa = (0.75 - 0.5) / 0.5 = 0.5; i5 (bob missing) is left out
    ann = {"i1": "A", "i2": "A", "i3": "B", "i4": "B", "i5": "A"}
    bob = {"i1": "A", "i2": "B", "i3": "B", "i4": "B", "i5": None}
    assert cohen_kappa(ann, bob) == 0.5


def test_not_enough_overlap_is_none_never_nan():
    assert krippendorff_alpha({"ann": {"i1": "A"}, "bob": {"i2": "B"}}) is None
    assert cohen_kappa({"i1": "A"}, {"i1": "A"}) is None
    assert cohen_kappa({"i1": "A", "i2": "A"}, {"i1": "A", "i2": "A"}) is None  # no variation
    result = agreement({"ann": {"i1": "A"}, "bob": {"i2": "A"}})
    assert result.alpha is None and result.kappa == {("ann", "bob"): None} and result.comparable_items == 0


def test_majority_agreement_and_disputed_items():
    answers = {"ann": {"i1": "A", "i2": "A", "i3": "C"}, "bob": {"i1": "A", "i2": "B", "i3": "C"},
               "cid": {"i1": "A", "i2": "B", "i3": "D"}}
    result = agreement(answers)
    assert result.with_majority == {"ann": pytest.approx(2 / 3, abs=1e-4), "bob": 1.0,
                                    "cid": pytest.approx(2 / 3, abs=1e-4)}
    assert result.disputed == ["i2", "i3"] and result.comparable_items == 3
