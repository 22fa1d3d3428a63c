"""Sparse coding: encoders (issue 3) and basis learning."""

from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.coding.encoders import feature_sign
from neurosim.coding.encoders import k_winners
from neurosim.coding.encoders import lambda_for_count
from neurosim.coding.encoders import omp
from neurosim.coding.encoders import sparse_encode
