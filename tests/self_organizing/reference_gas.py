"""Independent NumPy transcriptions of the self-organising algorithms, written from the papers (the circuits' oracles).

Neural Gas: Martinetz, Berkovich & Schulten (1993), "Neural-gas network for
vector quantization and its application to time-series prediction", IEEE
Trans. Neural Networks 4(4), Sec. III: for each input ``x`` (``t = 0, 1,
...``), every reference vector moves by

    w_i <- w_i + eps(t) h_lambda(k_i(x, w)) (x - w_i),  h_lambda(k) = exp(-k / lambda(t)),

where ``k_i`` is the number of reference vectors closer to ``x`` than
``w_i``, and ``eps(t) = eps_i (eps_f / eps_i)^(t / t_max)``, ``lambda(t) =
lambda_i (lambda_f / lambda_i)^(t / t_max)``.
"""

import numpy as np


class NeuralGasReference:
    """One input per :meth:`step`; ``w`` holds the reference vectors as rows."""

    def __init__(self, w, eps_i=0.5, eps_f=0.005, lam_i=10.0, lam_f=0.01, t_max=40_000):
        self.w = np.array(w, dtype=float)
        self.eps_i, self.eps_f, self.lam_i, self.lam_f, self.t_max = eps_i, eps_f, lam_i, lam_f, t_max
        self.t = 0

    def step(self, x):
        x = np.asarray(x, dtype=float)
        frac = self.t / self.t_max
        eps = self.eps_i * (self.eps_f / self.eps_i) ** frac
        lam = self.lam_i * (self.lam_f / self.lam_i) ** frac
        dist = np.linalg.norm(x[None, :] - self.w, axis=1)
        k = (dist[None, :] < dist[:, None]).sum(axis=1)  # k_i: how many vectors are closer than w_i
        self.w += (eps * np.exp(-k / lam))[:, None] * (x[None, :] - self.w)
        self.t += 1
        return k
