"""Sparse coding: encoders (feature-sign search, OMP, k winners, structured codes) and basis learning."""

from neurosim.coding.encoders import NonConvergenceWarning
from neurosim.coding.encoders import feature_sign
from neurosim.coding.encoders import k_winners
from neurosim.coding.encoders import lambda_for_count
from neurosim.coding.encoders import omp
from neurosim.coding.encoders import sparse_encode
from neurosim.coding.normalization import NORMALIZATIONS
from neurosim.coding.normalization import normalized_atoms
from neurosim.coding.basis import BasisLearningResult
from neurosim.coding.basis import epsilon_l1_codes
from neurosim.coding.basis import lagrange_dual_bases
from neurosim.coding.basis import lagrange_dual_objective
from neurosim.coding.basis import learn_bases
from neurosim.coding.basis import projected_gradient_bases
from neurosim.coding.basis import sparse_coding_objective
from neurosim.coding.structured import structured_objective
from neurosim.coding.structured import structured_penalty
from neurosim.coding.structured import structured_sparse_code
