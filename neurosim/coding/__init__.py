from neurosim.coding.basis import (  # basis learning, Lee et al. 2006 (issue 3)
    BasisLearningResult,
    epsilon_l1_codes,
    lagrange_dual_bases,
    lagrange_dual_objective,
    learn_bases,
    projected_gradient_bases,
    sparse_coding_objective,
)
