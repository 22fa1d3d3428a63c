"""Fixtures of the engine tests."""

import pytest

from sm_helpers import make_sm, state_of


@pytest.fixture
def sm():
    return make_sm


@pytest.fixture
def snapshot():
    return state_of
