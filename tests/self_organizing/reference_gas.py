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


class GNGReference:
    """Fritzke (1995), "A growing neural gas network learns topologies", NIPS 7, Sec. 3, steps 0-8, as printed.

    Units are a dict ``id -> reference vector`` and ``id -> error``; edges a
    dict ``frozenset({a, b}) -> age``. Ids count up from 0 and are never
    reused; "first" on ties means the lowest id. ``events`` collects
    ``(input number, kind, a, b)``: ``("link"|"unlink", a, b)`` for edges
    created and removed, ``("birth"|"death", id, -1)`` for units.
    """

    def __init__(self, w0, eps_b=0.2, eps_n=0.006, lam=100, a_max=50, alpha=0.5, d=0.995, max_units=None):
        # step 0: two units at the given positions, no edges
        self.w = {0: np.array(w0[0], dtype=float), 1: np.array(w0[1], dtype=float)}
        self.error = {0: 0.0, 1: 0.0}
        self.edges = {}
        self.next_id = 2
        self.eps_b, self.eps_n, self.lam, self.a_max, self.alpha, self.d = eps_b, eps_n, lam, a_max, alpha, d
        self.max_units = max_units
        self.inputs = 0
        self.events = []

    def neighbours(self, u):
        return sorted(v for e in self.edges for v in e if u in e and v != u)

    def step(self, x):
        x = np.asarray(x, dtype=float)
        self.inputs += 1
        log = lambda kind, a, b=-1: self.events.append((self.inputs, kind, a, b))  # noqa: E731
        # step 1: the nearest unit s1 and the second nearest s2
        ids = sorted(self.w)
        dist2 = {u: float(np.sum((x - self.w[u]) ** 2)) for u in ids}
        s1, s2 = sorted(ids, key=lambda u: (dist2[u], u))[:2]
        # step 2: age every edge emanating from s1
        for e in self.edges:
            if s1 in e:
                self.edges[e] += 1
        # step 3: add the squared distance to s1's error
        self.error[s1] += dist2[s1]
        # step 4: move s1 and its direct topological neighbours toward x
        self.w[s1] = self.w[s1] + self.eps_b * (x - self.w[s1])
        for n in self.neighbours(s1):
            self.w[n] = self.w[n] + self.eps_n * (x - self.w[n])
        # step 5: refresh or create the edge s1 - s2
        e12 = frozenset((s1, s2))
        if e12 not in self.edges:
            log("link", s1, s2)
        self.edges[e12] = 0
        # step 6: remove edges older than a_max, then units left without edges
        for e in sorted(self.edges, key=sorted):
            if self.edges[e] > self.a_max:
                log("unlink", *sorted(e))
                del self.edges[e]
                for u in e:
                    if not self.neighbours(u):
                        log("death", u)
                        del self.w[u], self.error[u]
        # step 7: every lam inputs insert r between q (largest error) and f (q's neighbour of largest error)
        if self.inputs % self.lam == 0 and (self.max_units is None or len(self.w) < self.max_units):
            q = max(sorted(self.w), key=lambda u: (self.error[u], -u))
            f = max(self.neighbours(q), key=lambda u: (self.error[u], -u))
            r = self.next_id
            self.next_id += 1
            self.w[r] = 0.5 * (self.w[q] + self.w[f])
            log("birth", r)
            self.edges[frozenset((r, q))] = 0
            self.edges[frozenset((r, f))] = 0
            log("link", r, q)
            log("link", r, f)
            del self.edges[frozenset((q, f))]
            log("unlink", q, f)
            self.error[q] *= self.alpha
            self.error[f] *= self.alpha
            self.error[r] = self.error[q]
        # step 8: decrease every error
        for u in self.error:
            self.error[u] *= self.d


class GWRReference:
    """Marsland, Shapiro & Nehmzow (2002), "A self-organising network that grows when required", Sec. 3.1, as printed.

    Habituation, Eq. 3 with ``h_0 = S = 1``: a counter that has fired ``k``
    times holds ``h(k) = 1 - (1 - exp(-alpha k / tau)) / alpha``; each firing
    advances its own time by one (``k`` is kept per unit and per role is not
    needed: the step from ``h(k)`` to ``h(k + 1)`` multiplies ``h - h_inf`` by
    ``exp(-alpha / tau)`` whatever ``k``, so the transcription steps ``h``).
    Same bookkeeping as :class:`GNGReference`.
    """

    def __init__(self, w0, a_T=0.95, h_T=0.1, eps_b=0.1, eps_n=0.01, tau_b=3.33, tau_n=14.3, alpha_b=1.05,
                 alpha_n=1.05, a_max=50, max_units=None):
        self.w = {0: np.array(w0[0], dtype=float), 1: np.array(w0[1], dtype=float)}
        self.h = {0: 1.0, 1: 1.0}
        self.edges = {}
        self.next_id = 2
        self.a_T, self.h_T, self.eps_b, self.eps_n = a_T, h_T, eps_b, eps_n
        self.tau_b, self.tau_n, self.alpha_b, self.alpha_n, self.a_max = tau_b, tau_n, alpha_b, alpha_n, a_max
        self.max_units = max_units
        self.inputs = 0
        self.events = []

    @staticmethod
    def _fire(h, alpha, tau):
        h_inf = 1.0 - 1.0 / alpha
        return h_inf + (h - h_inf) * np.exp(-alpha / tau)

    def neighbours(self, u):
        return sorted(v for e in self.edges for v in e if u in e and v != u)

    def step(self, x):
        x = np.asarray(x, dtype=float)
        self.inputs += 1
        log = lambda kind, a, b=-1: self.events.append((self.inputs, kind, a, b))  # noqa: E731
        # 2-4: best and second-best matching nodes
        ids = sorted(self.w)
        dist2 = {u: float(np.sum((x - self.w[u]) ** 2)) for u in ids}
        s, t = sorted(ids, key=lambda u: (dist2[u], u))[:2]
        # 5: connect them (age 0)
        if frozenset((s, t)) not in self.edges:
            log("link", s, t)
        self.edges[frozenset((s, t))] = 0
        # 6: activity of the best matching node
        a = np.exp(-np.sqrt(dist2[s]))
        # 7: add a node when the activity and the firing counter are both low
        if a < self.a_T and self.h[s] < self.h_T and (self.max_units is None or len(self.w) < self.max_units):
            r = self.next_id
            self.next_id += 1
            self.w[r] = (self.w[s] + x) / 2
            self.h[r] = 1.0
            log("birth", r)
            self.edges[frozenset((r, s))] = 0
            self.edges[frozenset((r, t))] = 0
            log("link", r, s)
            log("link", r, t)
            del self.edges[frozenset((s, t))]
            log("unlink", s, t)
        else:
            # 8: adapt the winner and its neighbours, scaled by their firing counters
            neighbours = self.neighbours(s)
            self.w[s] = self.w[s] + self.eps_b * self.h[s] * (x - self.w[s])
            for i in neighbours:
                self.w[i] = self.w[i] + self.eps_n * self.h[i] * (x - self.w[i])
        # 9: age the edges with an end at s
        for e in self.edges:
            if s in e:
                self.edges[e] += 1
        # 10: habituate s and its neighbours
        self.h[s] = self._fire(self.h[s], self.alpha_b, self.tau_b)
        for i in self.neighbours(s):
            self.h[i] = self._fire(self.h[i], self.alpha_n, self.tau_n)
        # 11: delete edges older than a_max and nodes without neighbours
        for e in sorted(self.edges, key=sorted):
            if self.edges[e] > self.a_max:
                log("unlink", *sorted(e))
                del self.edges[e]
        for u in sorted(self.w):
            if not self.neighbours(u):
                log("death", u)
                del self.w[u], self.h[u]
