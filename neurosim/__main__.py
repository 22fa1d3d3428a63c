"""``python -m neurosim`` is the ``neurosim`` command."""

import sys

from neurosim.cli import main

sys.exit(main())
