"""What every circuit of :mod:`neurosim.models` is: a built network, handles to its parts, and one way to use it.

A circuit is a dataclass that a ``build_*`` function returns: ``network`` (a
:class:`~neurosim.Network`) and handles to the populations and projections
that the paper names. :class:`Circuit` gives each the same verbs --
:meth:`~Circuit.run`, :meth:`~Circuit.recordings`, :meth:`~Circuit.save` and
:meth:`~Circuit.load` -- so that a new circuit is its build function plus
what is truly its own (the paper's views of its state, its error measures).
"""

from __future__ import annotations

import os
import pathlib

import neurosim as ns

__all__ = ["Circuit"]


class Circuit:
    """Base of the circuits in :mod:`neurosim.models`: the verbs every one of them has, on its ``network``.

    Subclasses are dataclasses with a field ``network`` (a :class:`~neurosim.Network`).
    """

    network: ns.Network

    def run(self, steps: int, progress: bool | None = None, backend: str = "auto") -> ns.Network:
        """Run the circuit's network ``steps`` steps (:meth:`neurosim.Network.run`).

        Parameters
        ----------
        steps : int >= 0
            Number of steps (inputs, for the circuits that take one a step).
        progress : bool, optional
            Show a progress bar; default: when someone is watching (see
            :meth:`neurosim.Network.run`).
        backend : {"auto", "compiled", "python", "cuda"}, optional
            The execution path (:meth:`neurosim.Network.run`).

        Returns
        -------
        neurosim.Network
            The network, at its new step.
        """
        return self.network.run(steps, progress=progress, backend=backend)

    def recordings(self) -> dict:
        """Every recording of the network so far, as :class:`xarray.Dataset` by recorder name.

        Returns
        -------
        dict of str to xarray.Dataset
            ``network.recorders[name].to_dataset()`` for each recorder.
        """
        return {name: recorder.to_dataset() for name, recorder in self.network.recorders.items()}

    def save(self, path: str | os.PathLike, overwrite: bool = False) -> pathlib.Path:
        """Write a checkpoint of the circuit's network (:meth:`neurosim.Network.save`).

        Parameters
        ----------
        path : str or path-like
            Where to write (``.npz`` appended unless present).
        overwrite : bool, default=False
            Replace a file there that is not a checkpoint of this circuit.

        Returns
        -------
        pathlib.Path
            The file written.
        """
        return self.network.save(path, overwrite=overwrite)

    def load(self, path: str | os.PathLike, strict: bool = True) -> Circuit:
        """Resume from a checkpoint that :meth:`save` wrote for a circuit built alike (:meth:`neurosim.Network.load`).

        Parameters
        ----------
        path : str or path-like
            The path given to :meth:`save`.
        strict : bool, default=True
            Refuse a checkpoint saved with other parameters.

        Returns
        -------
        Circuit
            This circuit, at the checkpoint's step.
        """
        self.network.load(path, strict=strict)
        return self
