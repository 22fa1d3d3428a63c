"""Sampled mutation testing of neurosim's core modules.

    python benchmarks/mutation.py --sample 200 --seed 0 --workers 2 --json run.json
    python benchmarks/mutation.py --rerun run.json --workers 1      # only that run's survivors, again
    python benchmarks/mutation.py --ids engine.py:133 --show        # the mutants on one line, as diffs
    python benchmarks/mutation.py --apply engine.py:133:call-skipped  # into the working tree, by hand

Generates every mutant of the core modules with :mod:`ast` (one small
change each: a flipped comparison, a swapped or dropped arithmetic term, a
constant changed, a ``range`` or index off by one, an ``if`` forced true or
false, a call statement or in-place update skipped, a boolean return
negated, ...), draws ``--sample`` of them with ``--seed``, and for each one
runs the fast tests mapped to the mutated module (``TESTS`` below) on a
mutated copy of the source tree. A mutant is

* ``killed``      when a test fails,
* ``error``       when it fails by an import, syntax or numba typing error
                  (killed, but listed apart: such a mutant says little about the tests),
* ``timeout``     when the tests run past ``3 x baseline + 10 s`` (counted as detected),
* ``survived``    when every test passes.

It prints the score and each survivor as ``file:line`` with its diff;
``--json PATH`` also writes every result. See ``docs/testing.md`` for the
design (why copies of the tree and per-mutant numba caches) and a trial run.
Not part of the test suite: a full run takes about an hour on two cores.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import fnmatch
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The core modules whose mutants are sampled.
TARGETS = [
    "neurosim/engine.py", "neurosim/network.py", "neurosim/events.py", "neurosim/io.py",
    "neurosim/triggers.py", "neurosim/rules/*.py", "neurosim/dynamics/*.py", "neurosim/coding/*.py",
    "neurosim/kernels/*.py", "neurosim/structural_plasticity.py",
    # the declared-parameter machinery the engine reads every step, and paper 000's accuracy measure
    "neurosim/params.py", "neurosim/schedules.py", "neurosim/component.py", "neurosim/reconstruction_accuracy.py",
    # a new structure's first steps (issue 40)
    "neurosim/first_steps.py",
]

_ENGINE = ["tests/engine/test_paths.py", "tests/engine/test_survivors.py"]
_PROMISES = ["tests/engine/test_engine_promises.py", "tests/engine/test_live_parameters.py",
             "tests/engine/test_structure_growth.py", "tests/engine/test_mutation_survivors_2.py",
             "tests/engine/test_mutation_survivors_3.py"]
_NEURO = ["tests/neurogenesis/test_circuit.py", "tests/neurogenesis/test_circuit_vs_reference.py",
          "tests/neurogenesis/test_lemma1.py", "tests/neurogenesis/test_bookkeeping.py",
          "tests/neurogenesis/test_bcd_blocked.py", "tests/neurogenesis/test_odl_peers.py",
          "tests/neurogenesis/test_reference_nodl.py", "tests/neurogenesis/test_bad_input.py"]
_SELECTION = ["tests/models/test_example_selection.py", "tests/selection/test_selectors.py"]
_OSDL = ["tests/osdl/test_osdl_rules.py", "tests/osdl/test_osdl_circuit.py", "tests/models/test_osdl_reference.py",
         "tests/engine/test_live_parameters.py", "tests/osdl/test_osdl_bad_input.py",
         "tests/osdl/test_code_workspace_shapes.py", "tests/test_component_populations.py"]
_SELF_ORGANIZING = ["tests/self_organizing/test_som.py", "tests/self_organizing/test_neural_gas.py",
                    "tests/self_organizing/test_gng.py", "tests/self_organizing/test_gwr.py",
                    "tests/self_organizing/test_self_organizing_bad_input.py",
                    "tests/self_organizing/test_maps_of_one_or_no_unit.py"]
def _doctests(*modules):
    """The node ids of ``tests/test_doctests.py`` that run these modules' Examples sections."""
    return [f"tests/test_doctests.py::test_examples_run[{m}]" for m in modules]


# Module -> the fast tests that exercise it (first matching pattern wins). A mutant runs
# only these: the whole suite per mutant would take hours.
# sparse synapses (issue 39): connectivity, the synapse index, sparse kernels against dense-with-mask,
# structural plasticity of synapses (Prune/Grow), recordings of sparse weights
_SPARSE = ["tests/sparse_synapses/test_connectivity.py", "tests/sparse_synapses/test_synapse_index.py",
           "tests/sparse_synapses/test_sparse_projection.py", "tests/sparse_synapses/test_structural_plasticity.py",
           "tests/sparse_synapses/test_sparse_recording.py", "tests/sparse_synapses/test_sparse_standard_rules.py",
           "tests/sparse_synapses/test_per_synapse_rules.py", "tests/sparse_synapses/test_sparse_competitive.py",
           "tests/sparse_synapses/test_sparse_kernels.py", "tests/sparse_synapses/test_fusion.py"]
# rules on sparse synapses: the standard ones, per-synapse user rules and the loops generated for them
_SPARSE_RULES = ["tests/sparse_synapses/test_sparse_standard_rules.py", "tests/sparse_synapses/test_per_synapse_rules.py"]

TESTS = [
    # the first steps' interpreted kernels and the second process (issue 40)
    ("neurosim/first_steps.py", ["tests/engine/test_first_steps.py", "tests/engine/test_python_tier.py"]),
    ("neurosim/kernels/_interpreted.py", ["tests/engine/test_first_steps.py"]),
    ("neurosim/kernels/_background.py", ["tests/engine/test_first_steps.py"]),
    ("neurosim/engine.py", _ENGINE + _PROMISES + ["tests/engine/test_events.py", "tests/engine/test_divergence.py",
                                                  "tests/engine/test_recording_io.py",
                                                  "tests/engine/test_jacobi_divergence.py",
                                                  "tests/engine/test_segment_hooks.py",
                                                  "tests/engine/test_trigger_inputs.py",
                                                  "tests/engine/test_progress_compile.py",
                                                  "tests/engine/test_path_failures.py",
                                                  "tests/engine/test_recording_turnover.py",
                                                  "tests/experiment/test_streaming_growth.py",
                                                  "tests/engine/test_segment_cache.py",
                                                  "tests/engine/test_view_split.py",
                                                  "tests/engine/test_segment_caps.py",
                                                  "tests/engine/test_weights_assignment.py",
                                                  "tests/test_documented_defaults.py",
                                                  "tests/test_documented_ranges.py"]),
    ("neurosim/network.py", _ENGINE + _PROMISES + ["tests/engine/test_validation.py", "tests/engine/test_events.py",
                                                   "tests/engine/test_rule_attach.py",
                                                   "tests/engine/test_events_atomic.py",
                                                   "tests/engine/test_structure_checks.py",
                                                   "tests/engine/test_recording_io.py",
                                                   "tests/engine/test_schedule_rows.py",
                                                   "tests/engine/test_checkpoints.py", "tests/engine/test_reprs.py",
                                                   "tests/engine/test_path_failures.py",
                                                   "tests/engine/test_weights_assignment.py",
                                                   "tests/engine/test_recording_turnover.py",
                                                   "tests/engine/test_assign_event.py",
                                                   "tests/engine/test_synapse_events_in_one_call.py",
                                                   "tests/sparse_synapses/test_structural_plasticity.py",
                                                   "tests/engine/test_birth_memory_check.py",
                                                   "tests/experiment/test_store_ownership.py",
                                                   "tests/experiment/test_streaming_growth.py",
                                                   "tests/test_documented_defaults.py",
                                                   "tests/test_documented_ranges.py"]
                                                   + _doctests("neurosim.network")),
    ("neurosim/events.py", ["tests/engine/test_events.py", "tests/engine/test_events_atomic.py",
                            "tests/engine/test_structure_growth.py", "tests/engine/test_survivors.py",
                            "tests/self_organizing/test_gng.py",
                            "tests/self_organizing/test_self_organizing_bad_input.py",
                            "tests/engine/test_assign_event.py", "tests/engine/test_synapse_events_in_one_call.py",
                            "tests/engine/test_event_log_dict_and_trigger_refusals.py",
                            "tests/test_documented_defaults.py",
                            "tests/test_documented_ranges.py"] + _doctests("neurosim.events")),
    ("neurosim/triggers.py", ["tests/engine/test_events.py", "tests/engine/test_survivors.py",
                              "tests/engine/test_trigger_inputs.py", "tests/engine/test_structure_growth.py",
                              "tests/engine/test_events_atomic.py", "tests/engine/test_recording_turnover.py",
                              "tests/test_documented_defaults.py", "tests/test_documented_ranges.py"]
                              + _doctests("neurosim.triggers")),
    ("neurosim/io.py", ["tests/engine/test_recording_io.py", "tests/engine/test_checkpoints.py",
                        "tests/engine/test_structure_growth.py", "tests/engine/test_survivors.py",
                        "tests/test_documented_defaults.py", "tests/test_documented_ranges.py"]
                        + _doctests("neurosim.io")),
    ("neurosim/params.py", ["tests/test_declared_params.py", "tests/engine/test_live_parameters.py",
                            "tests/rules/test_local_rule.py", "tests/engine/test_checkpoints.py",
                            "tests/self_organizing/test_self_organizing_bad_input.py",
                            "tests/engine/test_recording_attrs.py", "tests/engine/test_path_failures.py",
                            "tests/rules/test_local_rule_signature.py",
                            "tests/test_documented_defaults.py",
                            "tests/test_documented_ranges.py"] + _doctests("neurosim.params")),
    ("neurosim/schedules.py", ["tests/engine/test_live_parameters.py", "tests/test_declared_params.py",
                               "tests/test_schedules.py", "tests/self_organizing/test_som.py",
                               "tests/engine/test_checkpoints.py", "tests/engine/test_path_failures.py",
                               "tests/self_organizing/test_neural_gas.py",
                               "tests/test_documented_defaults.py",
                               "tests/test_documented_ranges.py"] + _doctests("neurosim.schedules")),
    ("neurosim/component.py", _ENGINE + _PROMISES + ["tests/test_declared_params.py",
                                                     "tests/engine/test_structure_checks.py",
                                                     "tests/engine/test_component_helpers.py",
                                                     "tests/engine/test_schedule_rows.py",
                                                     "tests/test_component_populations.py"]),
    ("neurosim/reconstruction_accuracy.py", _NEURO + ["tests/test_declared_params.py",
                                       "tests/neurogenesis/test_reconstruction_accuracy.py",
                                       "tests/neurogenesis/test_coding_normalization.py",
                                       "tests/engine/test_validation.py", "tests/test_documented_defaults.py",
                                       "tests/test_documented_ranges.py"]),
    # the self-organising circuits (issue 27): their transcriptions, MiniSom and minigng, bad input
    ("neurosim/*/competitive.py", _SELF_ORGANIZING + ["tests/sparse_synapses/test_sparse_competitive.py",
                                                      "tests/test_declared_params.py",
                                                      "tests/engine/test_structure_checks.py",
                                                      "tests/test_documented_defaults.py",
                                                      "tests/test_documented_ranges.py",
                                                      "tests/rules/test_rules_outside_a_network.py"]),
    ("neurosim/rules/dictionary.py", _NEURO + ["tests/test_declared_params.py", "tests/test_documented_defaults.py",
                                               "tests/test_documented_ranges.py",
                                               "tests/neurogenesis/test_prox_count_by_hand.py",
                                               "tests/neurogenesis/test_unused_elements_both_paths.py"]),
    ("neurosim/rules/example_sgd.py", _SELECTION + ["tests/selection/test_normalize_rows.py",
                                                    "tests/test_declared_params.py",
                                                    "tests/test_documented_defaults.py",
                                                    "tests/test_documented_ranges.py"]),
    ("neurosim/rules/osdl.py", _OSDL + ["tests/test_declared_params.py", "tests/test_documented_defaults.py",
                                        "tests/test_documented_ranges.py"]),
    ("neurosim/rules/synapse_map.py", _SPARSE_RULES + ["tests/rules/test_standard_rules.py"]),
    ("neurosim/rules/local.py", _SPARSE_RULES + ["tests/rules/test_local_rule.py",
                                                 "tests/rules/test_standard_rules.py",
                                 "tests/rules/test_local_rule_signature.py",
                                 "tests/test_documented_defaults.py",
                                 "tests/test_documented_ranges.py"] + _doctests("neurosim.rules.local")),
    ("neurosim/rules/standard.py", _SPARSE_RULES + ["tests/rules/test_standard_rules.py",
                                                    "tests/test_declared_params.py",
                                    "tests/rules/test_local_rule_signature.py",
                                    "tests/rules/test_top_level_rules.py", "tests/test_documented_defaults.py",
                                    "tests/test_documented_ranges.py"]),
    ("neurosim/rules/*", _ENGINE + ["tests/engine/test_divergence.py", "tests/engine/test_validation.py",
                                    "tests/engine/test_live_parameters.py", "tests/engine/test_engine_promises.py",
                                    "tests/test_declared_params.py", "tests/test_documented_defaults.py",
                                    "tests/test_documented_ranges.py", "tests/rules/test_rules_outside_a_network.py"]
                                    + _doctests("neurosim.rules.hebbian", "neurosim.rules.activity")),
    ("neurosim/dynamics/sparse.py", ["tests/coding/test_sparse_dynamics.py", "tests/coding/test_path_parity.py",
                                     "tests/engine/test_structure_checks.py",
                                     "tests/engine/test_mutation_survivors_2.py",
                                     "tests/coding/test_count_target_lambda.py", "tests/test_documented_defaults.py",
                                     "tests/test_documented_ranges.py", "tests/coding/test_encoder_survivors_61.py",
                                     "tests/coding/test_encoder_survivors_107.py",
                                     "tests/neurogenesis/test_overflow_and_scales.py"]
                                     + _doctests("neurosim.dynamics.sparse")),
    ("neurosim/dynamics/structured.py", _OSDL + ["tests/coding/test_structured.py",
                                                 "tests/engine/test_structure_checks.py",
                                                 "tests/coding/test_structured_fista.py",
                                                 "tests/test_documented_defaults.py",
                                                 "tests/test_documented_ranges.py"]),
    ("neurosim/dynamics/*", _ENGINE + ["tests/engine/test_divergence.py", "tests/engine/test_validation.py",
                                       "tests/engine/test_event_log_dict_and_trigger_refusals.py",
                                       "tests/engine/test_jacobi_bookkeeping.py",
                                       "tests/engine/test_jacobi_divergence.py", "tests/test_declared_params.py",
                                       "tests/engine/test_mutation_survivors_2.py",
                                       "tests/test_documented_defaults.py", "tests/test_documented_ranges.py"]
                                       + _doctests("neurosim.dynamics.jacobi")),
    ("neurosim/coding/basis.py", ["tests/coding/test_basis.py", "tests/coding/test_encoder_oracles.py",
                                  "tests/coding/test_basis_contracts.py",
                                  "tests/coding/test_basis_iteration_counts.py",
                                  "tests/coding/test_basis_edge_inputs.py", "tests/coding/test_estimators.py",
                                  "tests/test_documented_defaults.py", "tests/test_documented_ranges.py",
                                  "tests/coding/test_empty_inputs.py",
                                  "tests/coding/test_basis_survivors_61.py",
                                  "tests/coding/test_line_search_by_hand.py",
                                  "tests/coding/test_eps_l1_cg_iterates.py",
                                  "tests/coding/test_solver_scales.py"] + _doctests("neurosim.coding.basis")),
    ("neurosim/coding/structured.py", ["tests/coding/test_structured.py", "tests/coding/test_structured_fista.py",
                                       "tests/coding/test_fista_iterates.py",
                                       "tests/osdl/test_osdl_circuit.py", "tests/coding/test_empty_inputs.py",
                                       "tests/test_documented_defaults.py", "tests/test_documented_ranges.py",
                                       "tests/coding/test_encoder_survivors_61.py",
                                       "tests/coding/test_encoder_survivors_107.py",
                                       "tests/coding/test_solver_scales.py",
                                       "tests/coding/test_missing_values_rule.py"]
                                      + _doctests("neurosim.coding.structured")),
    ("neurosim/coding/normalization.py", ["tests/neurogenesis/test_coding_normalization.py"]
    + _doctests("neurosim.coding.normalization")),
    ("neurosim/coding/*", ["tests/coding/test_greedy.py", "tests/coding/test_omp_guard.py",
                           "tests/coding/test_feature_sign.py", "tests/coding/test_encoders_validation.py",
                           "tests/coding/test_encoder_oracles.py", "tests/coding/test_sparse_dynamics.py",
                           "tests/coding/test_estimators.py", "tests/coding/test_empty_inputs.py",
                           "tests/test_documented_defaults.py", "tests/test_documented_ranges.py",
                           "tests/coding/test_encoder_survivors_61.py", "tests/coding/test_encoder_survivors_107.py",
                           "tests/coding/test_lambda_search_by_hand.py", "tests/coding/test_solver_scales.py",
                           "tests/neurogenesis/test_overflow_and_scales.py"] + _doctests("neurosim.coding.encoders")),
    ("neurosim/kernels/_build.py", _ENGINE),
    ("neurosim/kernels/_cache.py", ["tests/engine/test_kernel_cache_stamp.py", "tests/engine/test_segment_cache.py"]),
    ("neurosim/kernels/_inline_copy.py", ["tests/engine/test_inline_copy.py", "tests/engine/test_python_tier.py"]),
    ("neurosim/kernels/spiking.py", ["tests/spiking/test_cuba_brian2.py", "tests/spiking/test_lif.py",
                                     "tests/spiking/test_stdp_brian2.py", "tests/spiking/test_delays_and_poisson.py",
                                     "tests/spiking/test_coba_brian2.py"]),
    ("neurosim/dynamics/spiking.py", ["tests/spiking/test_cuba_brian2.py", "tests/spiking/test_lif.py",
                                      "tests/spiking/test_coba_brian2.py"]),
    ("neurosim/rules/transmission.py", ["tests/spiking/test_cuba_brian2.py", "tests/spiking/test_lif.py",
                                        "tests/spiking/test_delays_and_poisson.py"]),
    ("neurosim/rules/stdp.py", ["tests/spiking/test_stdp_brian2.py", "tests/spiking/test_spiking_infrastructure.py"]),
    ("neurosim/rules/trace.py", ["tests/spiking/test_stdp_brian2.py", "tests/spiking/test_spiking_infrastructure.py"]
                                + _doctests("neurosim.rules.trace")),
    ("neurosim/kernels/izhikevich.py", ["tests/spiking/test_izhikevich_brian2.py", "tests/spiking/test_izhikevich.py"]),
    ("neurosim/dynamics/izhikevich.py", ["tests/spiking/test_izhikevich_brian2.py", "tests/spiking/test_izhikevich.py"]),
    ("neurosim/analysis/spikes.py", ["tests/spiking/test_spike_analysis.py",
                                     "tests/spiking/test_spiking_infrastructure.py"]),
    ("neurosim/connectivity.py", _SPARSE),
    ("neurosim/fusion.py", ["tests/sparse_synapses/test_fusion.py", "tests/sparse_synapses/test_sparse_projection.py"]),
    ("neurosim/synapse_index.py", _SPARSE),
    ("neurosim/kernels/connect.py", _SPARSE),
    ("neurosim/kernels/sparse.py", _SPARSE),
    ("neurosim/kernels/structural.py", ["tests/sparse_synapses/test_structural_plasticity.py"]),
    ("neurosim/structural_plasticity.py", ["tests/sparse_synapses/test_structural_plasticity.py",
                                           "tests/sparse_synapses/test_sparse_recording.py"]
                                          + _doctests("neurosim.structural_plasticity")),
    ("neurosim/synapse_recording.py", ["tests/sparse_synapses/test_sparse_recording.py"]
                                      + _doctests("neurosim.synapse_recording")),
    ("neurosim/kernels/dense.py", _ENGINE + ["tests/engine/test_divergence.py",
                                             "tests/engine/test_jacobi_divergence.py",
                                             "tests/engine/test_jacobi_bookkeeping.py",
                                             "tests/engine/test_mutation_survivors_2.py",
                                             "tests/engine/test_threads.py", "tests/rules/test_standard_rules.py",
                                             "tests/engine/test_jacobi_stopping_rule.py",
                                             "tests/coding/test_solver_scales.py"]),
    ("neurosim/kernels/plasticity.py", _ENGINE + ["tests/engine/test_divergence.py", "tests/rules/test_local_rule.py",
                                                  "tests/engine/test_threads.py"]),
    ("neurosim/kernels/parallel.py", ["tests/engine/test_threads.py"]),
    ("neurosim/kernels/triggers.py", ["tests/engine/test_events.py", "tests/engine/test_survivors.py"]),
    ("neurosim/kernels/dictionary.py", _NEURO + ["tests/engine/test_threads.py",
                                                 "tests/neurogenesis/test_reconstruction_accuracy.py",
                                                 "tests/neurogenesis/test_prox_count_by_hand.py",
                                                 "tests/neurogenesis/test_unused_elements_both_paths.py",
                                                 "tests/coding/test_solver_scales.py",
                                                 "tests/neurogenesis/test_overflow_and_scales.py"]),
    ("neurosim/kernels/greedy.py", ["tests/coding/test_greedy.py", "tests/coding/test_omp_guard.py",
                                    "tests/coding/test_sparse_dynamics.py", "tests/coding/test_nn_omp.py",
                                    "tests/coding/test_greedy_workspaces.py", "tests/coding/test_solver_scales.py"]),
    ("neurosim/kernels/feature_sign.py", ["tests/coding/test_feature_sign.py", "tests/coding/test_sparse_dynamics.py",
                                          "tests/coding/test_encoder_oracles.py",
                                          "tests/coding/test_lambda_search_by_hand.py",
                                          "tests/coding/test_solver_scales.py",
                                          "tests/coding/test_solver_bookkeeping.py",
                                          "tests/coding/test_encoder_survivors_107.py"]),
    ("neurosim/kernels/encoding.py", ["tests/coding/test_sparse_dynamics.py", "tests/coding/test_feature_sign.py",
                                      "tests/coding/test_path_parity.py",
                                      "tests/neurogenesis/test_coding_normalization.py",
                                      "tests/coding/test_nn_omp.py", "tests/neurogenesis/test_overflow_and_scales.py"]),
    ("neurosim/kernels/basis.py", ["tests/coding/test_basis.py", "tests/coding/test_basis_contracts.py",
                                   "tests/coding/test_line_search_by_hand.py"]),
    ("neurosim/kernels/selection.py", ["tests/selection/test_measures.py", "tests/selection/test_selectors.py",
                                       "tests/selection/test_saliency.py"]),
    ("neurosim/kernels/selector.py", _SELECTION),
    ("neurosim/kernels/example_sgd.py", _SELECTION + ["tests/selection/test_normalize_rows.py"]),
    ("neurosim/kernels/osdl.py", _OSDL + ["tests/engine/test_threads.py", "tests/osdl/test_osdl_estimator_scales.py"]),
    ("neurosim/kernels/structured.py", ["tests/coding/test_structured.py", "tests/osdl/test_osdl_circuit.py",
                                        "tests/coding/test_structured_fista.py", "tests/osdl/test_osdl_rules.py",
                                        "tests/coding/test_solver_scales.py",
                                        "tests/coding/test_solver_bookkeeping.py"]),
    ("neurosim/kernels/structured_fista.py", ["tests/coding/test_structured_fista.py",
                                              "tests/coding/test_solver_scales.py",
                                              "tests/coding/test_solver_bookkeeping.py",
                                              "tests/coding/test_structured.py",
                                              "tests/coding/test_fista_iterates.py"]),
    # not sampled (not in TARGETS); mapped so that a run which adds the sweeps finds their tests (issue 38)
    ("neurosim/experiment.py", ["tests/experiment/test_sweep.py", "tests/experiment/test_sweep_hardening.py",
                                "tests/experiment/test_sweep_scripts.py"]),
    # not sampled either: the deferred imports of issue 40 (a stand-in that read the wrong module, or imported
    # eagerly, fails these)
    ("neurosim/_lazy.py", ["tests/test_lazy_imports.py", "tests/coding/test_basis_contracts.py"]),
    ("neurosim/__init__.py", ["tests/test_lazy_imports.py", "tests/rules/test_top_level_rules.py",
                              "tests/test_module_layout.py"]),
    # not sampled: the reproduction command of issue 41
    ("neurosim/reproduce.py", ["tests/test_reproduce.py"]),
]

# What a worker copies: the package, the tests and everything the quick tier reads (the benchmarks its smoke
# tests run, the docs and texts its documentation tests check, CI's script)
COPY = ["neurosim", "models", "simulations", "tests", "benchmarks", "docs", ".ci", "pyproject.toml", "setup.py",
        "*.md", "*.cff", "LICENSE"]

# The second stage (--suite): the quick tier, the suite a contributor runs (docs/testing.md), on a mutant
# that every mapped test let through
SUITE = ["-m", "not slow", "tests"]

ERROR_MARKERS = ("TypingError", "LoweringError", "UnsupportedError", "NumbaError", "ImportError",
                 "ModuleNotFoundError", "SyntaxError", "IndentationError", "errors during collection",
                 "ERROR collecting")


def tests_for(path: str) -> list[str]:
    for pattern, tests in TESTS:
        if fnmatch.fnmatch(path, pattern):
            return tests
    raise KeyError(f"no tests mapped to {path}")


def target_files() -> list[str]:
    out = set()
    for pattern in TARGETS:
        for p in ROOT.glob(pattern):
            if p.name != "__init__.py":
                out.add(p.relative_to(ROOT).as_posix())
    return sorted(out)


# -- mutant generation ----------------------------------------------------------------------------

@dataclass
class Mutant:
    path: str
    line: int
    kind: str
    before: str
    after: str
    start: tuple  # (line, col) of the replaced span, 1-based line, 0-based col
    end: tuple

    @property
    def key(self):
        return (self.path, self.start, self.end, self.after)

    @property
    def ident(self):
        """``path:line:kind``, what ``--ids`` selects (every mutant of that kind on that line)."""
        return f"{self.path}:{self.line}:{self.kind}"


_CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_CMP_FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
             ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
             ast.MatMult: ast.Mult}
_AUG_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.BitOr: ast.BitAnd}


def _skipped_nodes(tree) -> set:
    """Nodes whose subtrees are not mutated: docstrings, messages, reprs, raise statements, warnings, imports."""
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            skip.add(id(body[0]))
        if isinstance(node, (ast.Raise, ast.JoinedStr, ast.Assert)):
            skip.add(id(node))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in ("__repr__", "_unconverged_text"):
            skip.add(id(node))
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("warn", "TypeVar"):
                skip.add(id(node))
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            skip.add(id(node))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.add(id(node))
        # `if TYPE_CHECKING:` blocks hold imports for type checkers only: every mutant there is equivalent
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip.add(id(node))
        # annotations are not executed
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                if a.annotation is not None:
                    skip.add(id(a.annotation))
            if node.returns is not None:
                skip.add(id(node.returns))
            for d in node.decorator_list:
                skip.add(id(d))
        if isinstance(node, ast.AnnAssign):
            skip.add(id(node.annotation))
    return skip


def _walk(tree, skip):
    """ast.walk that does not enter skipped subtrees; yields (node, enclosing function or None)."""
    stack = [(tree, None)]
    while stack:
        node, fn = stack.pop()
        if id(node) in skip:
            continue
        yield node, fn
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, inner))


def _is_njit(fn) -> bool:
    if fn is None:
        return False
    for d in fn.decorator_list:
        src = ast.unparse(d)
        if "njit" in src or "jit" in src:
            return True
    return False


def _with(node, **changes):
    new = copy.deepcopy(node)
    for k, v in changes.items():
        setattr(new, k, v)
    return new


def _num(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _expr_replacements(node, fn):
    """(kind, new expression source) for one expression node."""
    out = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        if op in _CMP_SWAP:
            out.append(("compare-boundary", _with(node, ops=[_CMP_SWAP[op]()])))
        if op in _CMP_FLIP:
            out.append(("compare-flip", _with(node, ops=[_CMP_FLIP[op]()])))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(("boolop-swap", _with(node, op=other)))
        for i in range(len(node.values)):
            rest = node.values[:i] + node.values[i + 1:]
            new = rest[0] if len(rest) == 1 else _with(node, values=rest)
            out.append(("boolop-drop", copy.deepcopy(new)))
    elif isinstance(node, ast.BinOp):
        op = type(node.op)
        if op in _BIN_SWAP:
            out.append(("binop-swap", _with(node, op=_BIN_SWAP[op]())))
        if op in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            out.append(("binop-drop-right", copy.deepcopy(node.left)))
            if op in (ast.Add, ast.Mult):
                out.append(("binop-drop-left", copy.deepcopy(node.right)))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        out.append(("unary-drop", copy.deepcopy(node.operand)))
    elif isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            out.append(("const-bool", ast.Constant(not v)))
        elif isinstance(v, int):
            out.append(("const-int", ast.Constant(v + 1)))
            if v != 0:
                out.append(("const-int-zero", ast.Constant(0)))
        elif isinstance(v, float):
            out.append(("const-float", ast.Constant(v * 2.0 if v != 0.0 else 1.0)))
            if v != 0.0:
                out.append(("const-float-zero", ast.Constant(0.0)))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        args = node.args
        one = ast.Constant(1)
        if len(args) == 1:
            out.append(("range-stop", _with(node, args=[ast.BinOp(args[0], ast.Sub(), one)])))
        elif len(args) >= 2:
            out.append(("range-start", _with(node, args=[ast.BinOp(args[0], ast.Add(), one)] + args[1:])))
            out.append(("range-stop", _with(node, args=[args[0], ast.BinOp(args[1], ast.Sub(), one)] + args[2:])))
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        idx = node.slice
        if isinstance(idx, ast.Name):
            out.append(("index-minus-one", _with(node, slice=ast.BinOp(idx, ast.Sub(), ast.Constant(1)))))
        elif isinstance(idx, ast.Tuple) and idx.elts and isinstance(idx.elts[-1], ast.Name):
            elts = idx.elts[:-1] + [ast.BinOp(idx.elts[-1], ast.Sub(), ast.Constant(1))]
            out.append(("index-minus-one", _with(node, slice=ast.Tuple(elts, ast.Load()))))
    return out


def _stmt_replacements(node, fn):
    """(kind, span node, new source) for statements: forced ifs, skipped calls and updates, returns."""
    out = []
    if isinstance(node, ast.If):
        out.append(("if-true", node.test, "True"))
        out.append(("if-false", node.test, "False"))
    elif isinstance(node, ast.IfExp):
        out.append(("ifexp-true", node.test, "True"))
        out.append(("ifexp-false", node.test, "False"))
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        out.append(("call-skipped", node, "pass"))
    elif isinstance(node, ast.AugAssign):
        out.append(("update-skipped", node, "pass"))
        if type(node.op) in _AUG_SWAP:
            out.append(("update-swap", node, ast.unparse(_with(node, op=_AUG_SWAP[type(node.op)]()))))
    elif isinstance(node, ast.Return) and node.value is not None:
        v = node.value
        if isinstance(v, (ast.Compare, ast.BoolOp)) or (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)) \
                or (isinstance(v, ast.Constant) and isinstance(v.value, bool)):
            out.append(("return-negated", v, f"(not ({ast.unparse(v)}))"))
        elif not _is_njit(fn) and not _num(v):
            out.append(("return-none", v, "None"))
    return out


def _line_offsets(src: str):
    offs, pos = [], 0
    for line in src.splitlines(keepends=True):
        offs.append(pos)
        pos += len(line.encode("utf-8"))
    return offs


def generate(path: str) -> list[Mutant]:
    """Every mutant of one file, each compiling."""
    src = (ROOT / path).read_text()
    raw = src.encode("utf-8")
    tree = ast.parse(src)
    offs = _line_offsets(src)
    skip = _skipped_nodes(tree)
    out, seen = [], set()

    def span(node):
        a = offs[node.lineno - 1] + node.col_offset
        b = offs[node.end_lineno - 1] + node.end_col_offset
        return a, b

    def add(kind, node, new_src, paren):
        a, b = span(node)
        before = raw[a:b].decode("utf-8")
        simple = new_src.isidentifier() or new_src.startswith("(") and new_src.endswith(")")
        after = f"({new_src})" if paren and not simple else new_src
        if after == before:
            return
        mutated = (raw[:a] + after.encode("utf-8") + raw[b:]).decode("utf-8")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. "'float' object is not subscriptable" of a mutant
                compile(mutated, path, "exec")
        except SyntaxError:
            return
        m = Mutant(path, node.lineno, kind, before, after, (node.lineno, node.col_offset),
                   (node.end_lineno, node.end_col_offset))
        if m.key not in seen:
            seen.add(m.key)
            out.append(m)

    for node, fn in _walk(tree, skip):
        if not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.expr):
            # string and None constants are not mutated (messages, names, defaults)
            for kind, new in _expr_replacements(node, fn):
                add(kind, node, ast.unparse(new), paren=True)
        for kind, target, new_src in _stmt_replacements(node, fn):
            add(kind, target, new_src, paren=isinstance(target, ast.expr))
    return out


def apply(m: Mutant, src: str) -> str:
    raw = src.encode("utf-8")
    offs = _line_offsets(src)
    a = offs[m.start[0] - 1] + m.start[1]
    b = offs[m.end[0] - 1] + m.end[1]
    assert raw[a:b].decode("utf-8") == m.before, (m, raw[a:b])
    return (raw[:a] + m.after.encode("utf-8") + raw[b:]).decode("utf-8")


def diff(m: Mutant, src: str | None = None) -> str:
    """The mutant as a unified diff of ``src`` (default: the file as it is now)."""
    src = (ROOT / m.path).read_text() if src is None else src
    lines = difflib.unified_diff(src.splitlines(keepends=True), apply(m, src).splitlines(keepends=True),
                                 f"a/{m.path}", f"b/{m.path}", n=1)
    return "".join(lines)


def select(mutants, specs):
    """The mutants named by ``path:line``, ``path:line:kind`` or ``path:line:kind#k`` specs (``path`` may
    be a suffix, e.g. ``engine.py:133``); every mutant on that line (of that kind; the k-th of them, from
    0, in generation order) matches.  Unmatched specs are returned."""
    chosen, missing = [], []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or not parts[1].isdigit():
            raise SystemExit(f"--ids wants path:line[:kind[#k]], got {spec!r}")
        path, line, kind = parts[0], int(parts[1]), (parts[2] if len(parts) == 3 else None)
        k = None
        if kind and "#" in kind:
            kind, k = kind.split("#")
            k = int(k)
        hits = [m for m in mutants if (m.path == path or m.path.endswith("/" + path)) and m.line == line
                and (kind is None or m.kind == kind)]
        if k is not None:
            hits = hits[k:k + 1]
        if not hits:
            missing.append(spec)
        chosen += [m for m in hits if m not in chosen]
    return chosen, missing


def _ident(mutants, m):
    """``m.ident``, with ``#k`` when several mutants of its kind share its line (what ``select`` takes)."""
    same = [o for o in mutants if o.path == m.path and o.line == m.line and o.kind == m.kind]
    return m.ident if len(same) == 1 else f"{m.ident}#{same.index(m)}"


def relocate(mutants, old):
    """The current mutant that is ``old`` (a dict from a ``--json`` file) in a tree edited since: the same
    key if it still exists, else the same file, kind and text change on the nearest line (edits above it
    shift lines).  ``None`` when the mutated text is gone."""
    old = Mutant(**{k: tuple(v) if k in ("start", "end") else v for k, v in old.items()})
    same = [m for m in mutants if m.path == old.path and m.kind == old.kind and m.before == old.before
            and m.after == old.after]
    for m in same:
        if m.key == old.key:
            return m
    return min(same, key=lambda m: abs(m.line - old.line)) if same else None


# -- running ----------------------------------------------------------------------------------------

def _has_njit(path: str) -> bool:
    return "njit" in (ROOT / path).read_text()


class Worker:
    """A private copy of the tree with its own warm caches; applies one mutant at a time."""

    def __init__(self, index: int, base: Path):
        self.dir = base / f"w{index}"
        self.dir.mkdir(parents=True)
        for pattern in COPY:
            for src in sorted(ROOT.glob(pattern)):
                dst = self.dir / src.relative_to(ROOT)
                if src.is_dir():
                    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
                else:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dst)
        # the editable install maps neurosim.models and neurosim.simulations onto these folders
        for sub in ("models", "simulations"):
            (self.dir / "neurosim" / sub).symlink_to(self.dir / sub, target_is_directory=True)
        self.numba_cache = base / f"w{index}-numba"
        self.seg_cache = base / f"w{index}-segments"
        self.baseline = {}  # tuple(tests) -> (warm seconds, cold seconds)

    def env(self, numba_cache, seg_cache):
        env = dict(os.environ)
        env.update(PYTHONPATH=str(self.dir), PYTHONDONTWRITEBYTECODE="1", NUMBA_CACHE_DIR=str(numba_cache),
                   NEUROSIM_CACHE_DIR=str(seg_cache), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
        return env

    def check_imports_copy(self):
        r = subprocess.run([sys.executable, "-c", "import neurosim, neurosim.models; print(neurosim.__file__)"],
                           cwd=self.dir, env=self.env(self.numba_cache, self.seg_cache), capture_output=True, text=True)
        where = r.stdout.strip()
        if r.returncode or not where.startswith(str(self.dir)):
            raise RuntimeError(f"worker copy does not import its own neurosim: {where!r} {r.stderr}")

    def pytest(self, tests, env, timeout, suite=False):
        if suite or tests == SUITE:
            # the quick tier's thread tests need numba's pool at its default size (one thread per core)
            env = {k: v for k, v in env.items() if k != "NUMBA_NUM_THREADS"}
        # -n0: no xdist workers (the suite's addopts ask for one per core); the mutation workers are the parallelism
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-n0", "-p", "no:cacheprovider", "--no-header", *tests]
        started = time.perf_counter()
        try:
            # a run started in the background inherits SIGINT ignored; the engine's Ctrl-C tests need it
            r = subprocess.run(cmd, cwd=self.dir, env=env, capture_output=True, text=True, timeout=timeout,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return None, out, time.perf_counter() - started
        return r.returncode, r.stdout + r.stderr, time.perf_counter() - started

    def ensure_baseline(self, tests):
        key = tuple(tests)
        if key in self.baseline:
            return self.baseline[key]
        with tempfile.TemporaryDirectory(dir=self.dir.parent) as tmp:
            rc, out, cold = self.pytest(tests, self.env(Path(tmp) / "nb", Path(tmp) / "seg"), timeout=3600)
            if rc != 0:
                raise RuntimeError(f"baseline fails for {tests}:\n{out[-3000:]}")
            # the caches just filled are keyed on this copy's paths and stamps: they warm the worker's
            for sub, dst in (("nb", self.numba_cache), ("seg", self.seg_cache)):
                if (Path(tmp) / sub).exists():
                    shutil.copytree(Path(tmp) / sub, dst, dirs_exist_ok=True)
        rc, out, warm = self.pytest(tests, self.env(self.numba_cache, self.seg_cache), timeout=3600)
        if rc != 0:
            raise RuntimeError(f"baseline fails for {tests}:\n{out[-3000:]}")
        self.baseline[key] = (warm, cold)
        return warm, cold

    def run(self, m: Mutant, factor: float, slack: float, suite: bool = False) -> dict:
        tests = tests_for(m.path)
        warm, cold = self.ensure_baseline(tests)
        target = self.dir / m.path
        original = target.read_text()
        stat = target.stat()
        kernel = _has_njit(m.path)
        tmp = tempfile.mkdtemp(dir=self.dir.parent) if kernel else None

        def restore():
            target.write_text(original)
            # the original bytes and stamp: the warm numba cache stays valid for this file
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))

        def limit_for(times):
            # a kernel mutant compiles everything again (empty caches), so its limit scales the cold run
            return factor * (times[1] if kernel else times[0]) + slack

        warm_env = self.env(self.numba_cache, self.seg_cache)
        # numba's cache keys a function on its own file only: functions of other files that call the
        # mutated one would run stale machine code, so a kernel mutant gets empty caches
        env = self.env(Path(tmp) / "nb", Path(tmp) / "seg") if kernel else warm_env
        extra = {}
        try:
            target.write_text(apply(m, original))
            limit = limit_for((warm, cold))
            rc, out, took = self.pytest(tests, env, timeout=limit)
            status = _status(rc, out)
            stage = "mapped"
            if status == "survived" and suite:
                stage = "suite"
                key = tuple(SUITE)
                if key not in self.baseline:  # its baseline runs the original source, once per worker
                    restore()
                    self.ensure_baseline(SUITE)
                    target.write_text(apply(m, original))
                suite_limit = limit_for(self.baseline[key])
                rc, out, suite_took = self.pytest(SUITE, env, timeout=suite_limit)
                status = _status(rc, out)
                extra = dict(suite_seconds=round(suite_took, 1), suite_limit=round(suite_limit, 1))
                if status in ("killed", "error"):
                    # a kill by a test far from the mutated module is confirmed: that test alone must fail
                    # on the mutant and pass on the original, or the kill does not count (nor does an
                    # error that names no failing test)
                    node = _failed_nodes(out)[0] if _failed_nodes(out) else None
                    alone_mutant = self.pytest([node], env, suite_limit, suite=True)[0] if node else None
                    restore()
                    alone_original = self.pytest([node], warm_env, suite_limit, suite=True)[0] if node else None
                    confirmed = alone_mutant in (1, 2) and alone_original == 0
                    extra.update(killed_by=node, confirmed=confirmed)
                    if not confirmed:
                        status = "survived"
        finally:
            restore()
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        failed = [ln for ln in out.splitlines() if ln.startswith(("FAILED", "ERROR"))][:3]
        return dict(mutant=asdict(m), status=status, stage=stage, seconds=round(took, 1), limit=round(limit, 1),
                    tests=tests, failed=failed, tail=out[-1500:] if status in ("error", "survived") else "", **extra)


def _status(rc, out: str) -> str:
    if rc is None:
        return "timeout"
    if rc == 0:
        return "survived"
    if rc == 1 and not any(s in out for s in ERROR_MARKERS):
        return "killed"
    return "error"


def _failed_nodes(out: str) -> list[str]:
    """The node ids of pytest's ``FAILED node - message`` summary lines (``-ra``), in order."""
    nodes = []
    for ln in out.splitlines():
        if not ln.startswith("FAILED "):
            continue
        rest, cut = ln[len("FAILED "):], 0
        # the message follows the first " - " outside a parametrized id's brackets
        while (cut := rest.find(" - ", cut)) != -1 and rest[:cut].count("[") != rest[:cut].count("]"):
            cut += 3
        nodes.append((rest if cut == -1 else rest[:cut]).strip())
    return nodes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=200, help="mutants to draw (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--files", nargs="*", help="restrict to these files or glob patterns (default: all targets)")
    ap.add_argument("--factor", type=float, default=3.0, help="timeout = factor x baseline + slack")
    ap.add_argument("--slack", type=float, default=10.0)
    ap.add_argument("--list", action="store_true",
                    help="print the selected mutants (as path:line:kind, what --ids takes) and exit; "
                         "with --json also write them there")
    ap.add_argument("--show", action="store_true", help="print the selected mutants' diffs and exit")
    ap.add_argument("--ids", nargs="+", metavar="PATH:LINE[:KIND[#K]]",
                    help="run only these mutants instead of a sample (path may be a suffix: engine.py:133)")
    ap.add_argument("--rerun", metavar="PATH.json",
                    help="run only the mutants of a previous --json file with --rerun-status (default: "
                         "the survivors), found again by file, kind and text if lines moved since")
    ap.add_argument("--rerun-status", nargs="+", default=["survived"], metavar="STATUS")
    ap.add_argument("--apply", metavar="PATH:LINE[:KIND[#K]]",
                    help="write this one mutant into the working tree (to check a test by hand; undo with "
                         "git checkout -- PATH) and exit")
    ap.add_argument("--suite", action="store_true",
                    help="run a mutant that survives its mapped tests against the quick tier "
                         "(-m 'not slow' tests) too; a kill there counts once the failing test, run alone, "
                         "fails on the mutant and passes on the original")
    ap.add_argument("--json", help="write every result to this file")
    args = ap.parse_args(argv)

    files = target_files()
    if args.files:
        files = [f for f in files if any(fnmatch.fnmatch(f, p) for p in args.files)]
    mutants = [m for f in files for m in generate(f)]
    # the sources the mutants were made from: the tree may change during a long run
    sources = {f: (ROOT / f).read_text() for f in files}
    total = len(mutants)
    if args.apply:
        chosen, _ = select(mutants, [args.apply])
        if len(chosen) != 1:
            print(f"--apply {args.apply} matches {len(chosen)} mutants (name one by path:line:kind#k):")
            for m in chosen:
                print(f"  {_ident(mutants, m)} {m.before!r} -> {m.after!r}")
            return 2
        m = chosen[0]
        print(diff(m), end="")
        (ROOT / m.path).write_text(apply(m, (ROOT / m.path).read_text()))
        print(f"applied; restore with: git checkout -- {m.path}")
        return 0
    if args.ids or args.rerun:
        sample, missing = select(mutants, args.ids) if args.ids else ([], [])
        if args.rerun:
            for r in json.loads(Path(args.rerun).read_text()):
                if r.get("status", "survived") not in args.rerun_status:
                    continue
                m = relocate(mutants, r["mutant"])
                if m is None:
                    missing.append(f"{r['mutant']['path']}:{r['mutant']['line']}:{r['mutant']['kind']} "
                                   f"{r['mutant']['before']!r} -> {r['mutant']['after']!r}")
                elif m not in sample:
                    sample.append(m)
        for spec in missing:
            print(f"not found (the code changed?): {spec}")
        what = "selected"
    else:
        rng = random.Random(args.seed)
        sample = rng.sample(mutants, min(args.sample, total)) if args.sample else mutants
        what = f"seed {args.seed}"
    # group by test set so a worker reuses its warm caches; the order is still seeded
    sample.sort(key=lambda m: (tests_for(m.path), m.path, m.line))
    print(f"{total} mutants in {len(files)} files; running {len(sample)} ({what})", flush=True)
    if args.list or args.show:
        for m in sample:
            print(f"{_ident(mutants, m)} {m.before!r} -> {m.after!r}")
            if args.show:
                print(diff(m))
        if args.list and args.json:
            Path(args.json).write_text(json.dumps([dict(mutant=asdict(m), status="listed") for m in sample],
                                                  indent=1))
        return 0

    base = Path(tempfile.mkdtemp(prefix="neurosim-mutation-"))
    results, lock = [], threading.Lock()
    todo = queue.Queue()
    for i, m in enumerate(sample):
        todo.put((i, m))
    started = time.perf_counter()

    def work(index):
        w = Worker(index, base)
        w.check_imports_copy()
        while True:
            try:
                i, m = todo.get_nowait()
            except queue.Empty:
                return
            try:
                r = w.run(m, args.factor, args.slack, suite=args.suite)
            except Exception as e:  # a failing baseline: report, do not count
                r = dict(mutant=asdict(m), status="no-baseline", stage="", seconds=0.0, limit=0.0, tests=tests_for(m.path),
                         failed=[str(e).splitlines()[0]], tail=str(e)[-1500:])
            with lock:
                results.append(r)
                by_suite = f" (quick tier: {r.get('killed_by') or 'passed'}, {r['suite_seconds']:.0f}s)" \
                    if "suite_seconds" in r else ""
                print(f"[{len(results):3d}/{len(sample)}] {r['status']:8s} {r['seconds']:6.1f}s "
                      f"{m.path}:{m.line} [{m.kind}] {m.before!r} -> {m.after!r}{by_suite}", flush=True)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(args.workers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        shutil.rmtree(base, ignore_errors=True)

    counts = {s: sum(r["status"] == s for r in results) for s in ("killed", "error", "timeout", "survived")}
    broken = [r for r in results if r["status"] == "no-baseline"]
    if broken:
        print(f"\n{len(broken)} mutants not run: their tests fail without any mutation")
        for line in sorted({r["failed"][0] for r in broken}):
            print("   " + line)
    everything = list(results)
    results = [r for r in results if r["status"] != "no-baseline"]
    n = len(results)
    detected = counts["killed"] + counts["error"] + counts["timeout"]
    print(f"\n{n} mutants in {time.perf_counter() - started:.0f} s: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if n and args.suite:
        mapped = sum(r["status"] != "survived" and r["stage"] == "mapped" for r in results)
        unconfirmed = sum(r["stage"] == "suite" and r.get("confirmed") is False for r in results)
        print(f"detected by the mapped tests: {mapped}/{n} = {mapped / n:.1%}; by the quick tier after them: "
              f"{detected - mapped} more ({unconfirmed} quick-tier failures not confirmed, counted as survived)")
    if n:
        print(f"score (killed + error + timeout) / all = {detected}/{n} = {detected / n:.1%}")
        if n > counts["error"]:
            print(f"score without the error-killed = {counts['killed'] + counts['timeout']}/{n - counts['error']} "
                  f"= {(counts['killed'] + counts['timeout']) / (n - counts['error']):.1%}")
    if args.json:  # before the report, so a long run's results survive anything that follows
        Path(args.json).write_text(json.dumps(everything, indent=1))
    for label in ("error", "timeout", "survived"):
        rows = [r for r in results if r["status"] == label]
        if rows:
            print(f"\n== {label} ==")
        for r in sorted(rows, key=lambda r: (r["mutant"]["path"], r["mutant"]["line"])):
            m = Mutant(**{k: tuple(v) if k in ("start", "end") else v for k, v in r["mutant"].items()})
            print(f"{m.path}:{m.line} [{m.kind}]")
            if label == "survived":
                print(diff(m, sources.get(m.path)))
            elif r["failed"]:
                print("   " + r["failed"][0][:200])
    return 0


if __name__ == "__main__":
    sys.exit(main())
