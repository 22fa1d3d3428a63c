"""``python -m neurosim`` is the ``neurosim`` command."""

import sys

from neurosim.cli import main

# guarded like any script that starts a process sweep: `neurosim sweep` on processes refused to run without it
if __name__ == "__main__":
    sys.exit(main())
