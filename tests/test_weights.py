"""The cosine weights and W_d, by hand."""

from __future__ import annotations

from math import log, sqrt

import numpy as np
import pytest

from coderiv.weights import cosine_weight, document_norms, idf_weight, posting_norms, tf_weight


def test_weights_by_hand() -> None:
    assert idf_weight(np.array([1.0, 4.0]), 4).tolist() == pytest.approx([log(5), log(2)])
    assert tf_weight(np.array([1.0, np.e])).tolist() == pytest.approx([1.0, 2.0])
    assert cosine_weight(np.array([2.0]), np.array([2.0]), 4).tolist() == pytest.approx([(1 + log(2)) * log(3)])


def test_document_norms_add_up_over_pieces() -> None:
    # document 0 holds t1 (f=1, f_t=1) and t2 (f=2, f_t=2); document 1 holds t2 once; N = 2
    x00, x01, x11 = log(3), (1 + log(2)) * log(2), log(2)
    whole = posting_norms(np.array([0, 0, 1]), np.array([1, 2, 1]), np.array([1, 2, 2]), 2)
    assert whole.tolist() == pytest.approx([sqrt(x00**2 + x01**2), x11])
    pieces = document_norms([(np.array([0]), np.array([x00])), (np.array([0, 1]), np.array([x01, x11]))], 2)
    assert pieces.tolist() == pytest.approx(whole.tolist(), rel=1e-15)
