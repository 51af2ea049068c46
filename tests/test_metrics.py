"""STARK's trimmed RMSE and friends, by hand."""
import math

import pytest

from stsim.scoring.metrics import median_error, rmse, rmspe, trimmed, trimmed_rmse


def test_trimmed_rmse_by_hand():
    errors = list(range(1, 11))               # 1..10; 10 % trim drops 1 and 10
    assert trimmed(errors).tolist() == list(range(2, 10))
    assert trimmed_rmse(errors) == pytest.approx(math.sqrt(sum(k * k for k in range(2, 10)) / 8))
    assert rmse([3, 4]) == pytest.approx(math.sqrt(12.5))
    assert trimmed_rmse(errors, 0.25) == pytest.approx(math.sqrt(sum(k * k for k in range(3, 9)) / 6))


def test_outlier_is_trimmed():
    errors = [0.1] * 9 + [100.0]
    assert trimmed_rmse(errors) == pytest.approx(0.1)
    assert rmse(errors) > 30


def test_edge_cases():
    assert math.isnan(rmse([])) and math.isnan(trimmed_rmse([None, float("nan")]))
    assert median_error([1, 3, 2]) == 2
    assert rmspe([1.0, 2.0], [10.0, 10.0]) == pytest.approx(math.sqrt((0.01 + 0.04) / 2))
    with pytest.raises(ValueError):
        trimmed([1, 2], 0.5)
