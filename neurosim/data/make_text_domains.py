"""Regenerate the shipped two-domain text data set, ``text_domains.npz``.

The data are word co-occurrence vectors built from the noun glosses of
WordNet 3.0, read from the Debian package ``wordnet-base`` (file
``usr/share/wordnet/data.noun``). Two topical domains share one vocabulary:

* **biology** -- synsets of lexicographer files 05 (``noun.animal``) and 20
  (``noun.plant``);
* **artifacts** -- synsets of lexicographer file 06 (``noun.artifact``).

Both come from the same dictionary, written in the same style, so only the
topic changes between the domains. This mirrors the sparse NLP problem of
Sec. C.2 of Garg et al., "Neurogenesis-inspired dictionary learning" (a
word co-occurrence matrix over two topical domains, one sample per
vocabulary word, with non-domain-specific words removed from the
vocabulary); the paper's own corpus (biology and mathematics texts) is not
available.

Construction
------------
1. Each synset of the three lexicographer files is one *document*: its
   lemma words (multi-word lemmas split at ``_`` and ``-``) followed by the
   definition part of its gloss (quoted usage examples are dropped).
2. A document is lower-cased and split into alphabetic tokens; tokens of
   fewer than 3 letters and English stop words (scikit-learn's
   ``ENGLISH_STOP_WORDS``) are dropped. No stemming is done.
3. For every token its document frequency in each domain, ``df_b`` and
   ``df_a``, is counted, and its domain *share* is
   ``s = r_b / (r_b + r_a)`` with rates ``r = df / (documents in domain)``.
   The vocabulary keeps tokens with ``df_b + df_a >= MIN_DF`` whose share
   is domain specific: ``s >= PURITY`` (a biology word) or
   ``s <= 1 - PURITY`` (an artifact word). Other tokens are the
   non-domain-specific words the paper removes.
4. ``C[u, v]`` counts the documents (of both domains) that contain both
   vocabulary words ``u != v``; ``C`` is symmetric with an empty diagonal.
   Words whose row is empty are dropped.
5. Words are ordered biology first, then artifacts, alphabetically within
   each, so ``C`` is nearly block diagonal. Each biology word also gets a
   sub-domain label, animal (file 05) or plant (file 20), by the larger of
   its two document rates.

The file stores the upper triangle of ``C`` (``i < j``) in coordinate form
together with the vocabulary, the per-word domain and sub-domain labels and
the construction constants; :func:`neurosim.data.domains.load_text_domains`
rebuilds the symmetric matrix.

Usage::

    apt-get download wordnet-base
    dpkg-deb -x wordnet-base_*.deb wordnet
    python -m neurosim.data.make_text_domains wordnet/usr/share/wordnet/data.noun

WordNet 3.0 is distributed under the WordNet 3.0 licence; its notice is in
``WORDNET_LICENSE.txt`` next to the data file and must stay with it.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import Counter
from pathlib import Path

import numpy as np

__all__ = ["MIN_DF", "PURITY", "LEXFILES", "read_documents", "build", "main"]

#: Minimum number of documents (both domains) a vocabulary word occurs in.
MIN_DF = 2
#: Minimum share of a word's (rate-normalised) occurrences in its own domain.
PURITY = 0.8
#: Lexicographer file -> (domain, sub-domain).
LEXFILES = {5: ("biology", "animal"), 20: ("biology", "plant"), 6: ("artifacts", "artifact")}

DOMAINS = ("biology", "artifacts")
SUBDOMAINS = {"biology": ("animal", "plant"), "artifacts": ("artifact",)}

_TOKEN = re.compile(r"[a-z]+")
_QUOTED = re.compile(r'"[^"]*"?')


def _stop_words() -> frozenset:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def read_documents(path) -> list[tuple[int, list[str]]]:
    """Read the documents of the selected lexicographer files.

    Parameters
    ----------
    path : str or pathlib.Path
        WordNet 3.0 ``data.noun``.

    Returns
    -------
    list of (int, list of str)
        ``(lexicographer file, tokens)`` per synset of a file in
        :data:`LEXFILES`, in file order; tokens are unique per document and
        in order of first occurrence.
    """
    stop = _stop_words()
    docs = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("  "):  # licence header
                continue
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            lex = int(fields[1])
            if lex not in LEXFILES:
                continue
            n_words = int(fields[3], 16)
            lemmas = fields[4 : 4 + 2 * n_words : 2]
            definition = _QUOTED.sub(" ", gloss).split(";")
            text = " ".join(re.sub(r"[_\-]", " ", w) for w in lemmas) + " " + " ".join(definition)
            tokens = [t for t in _TOKEN.findall(text.lower()) if len(t) >= 3 and t not in stop]
            docs.append((lex, list(dict.fromkeys(tokens))))
    return docs


def build(docs, min_df: int = MIN_DF, purity: float = PURITY) -> dict:
    """Build the vocabulary and co-occurrence counts from documents.

    Parameters
    ----------
    docs : list of (int, list of str)
        Output of :func:`read_documents`.
    min_df : int
        See :data:`MIN_DF`.
    purity : float
        See :data:`PURITY`.

    Returns
    -------
    dict
        Arrays to save: ``vocabulary`` (str), ``domain`` (0 biology,
        1 artifacts), ``subdomain`` (0 animal / 1 plant for biology words,
        0 for artifact words), ``row``, ``col``, ``count`` (upper triangle
        of the co-occurrence matrix), ``n_documents`` (per lexicographer
        file 05, 20, 06) and the constants.
    """
    lex_order = (5, 20, 6)
    n_docs = Counter(lex for lex, _ in docs)
    df: dict[int, Counter[str]] = {lex: Counter() for lex in lex_order}
    for lex, toks in docs:
        df[lex].update(toks)
    words = set().union(*(set(c) for c in df.values()))
    info = {}
    for w in words:
        d = {lex: df[lex][w] for lex in lex_order}
        if sum(d.values()) < min_df:
            continue
        r_animal, r_plant = d[5] / n_docs[5], d[20] / n_docs[20]
        r_bio = (d[5] + d[20]) / (n_docs[5] + n_docs[20])
        r_art = d[6] / n_docs[6]
        share = r_bio / (r_bio + r_art)
        if share >= purity:
            info[w] = (0, 0 if r_animal >= r_plant else 1)
        elif share <= 1.0 - purity:
            info[w] = (1, 0)
    # Co-occurrence counts over all documents, restricted to the vocabulary.
    pairs: Counter[tuple[str, str]] = Counter()
    for _, toks in docs:
        kept = sorted(t for t in toks if t in info)
        for i, u in enumerate(kept):
            for v in kept[i + 1 :]:
                pairs[u, v] += 1
    connected = {w for pair in pairs for w in pair}
    vocab = sorted((w for w in info if w in connected), key=lambda w: (info[w][0], w))
    index = {w: i for i, w in enumerate(vocab)}
    row, col, counts = [], [], []
    for (u, v), c in pairs.items():
        i, j = sorted((index[u], index[v]))
        row.append(i)
        col.append(j)
        counts.append(c)
    order = np.lexsort((col, row))
    count = np.asarray(counts)[order]
    return {
        "vocabulary": np.array(vocab, dtype=np.str_),
        "domain": np.array([info[w][0] for w in vocab], dtype=np.int8),
        "subdomain": np.array([info[w][1] for w in vocab], dtype=np.int8),
        "row": np.asarray(row, dtype=np.int32)[order],
        "col": np.asarray(col, dtype=np.int32)[order],
        "count": count.astype(np.uint16 if count.max() < 2**16 else np.uint32),
        "n_documents": np.array([n_docs[lex] for lex in lex_order], dtype=np.int64),
        "min_df": np.int64(min_df),
        "purity": np.float64(purity),
    }


def main(argv=None) -> None:
    """Command-line entry point: ``DATA_NOUN [-o OUT]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_noun", help="WordNet 3.0 data.noun (Debian package wordnet-base)")
    parser.add_argument("-o", "--out", default=str(Path(__file__).with_name("text_domains.npz")))
    args = parser.parse_args(argv)
    raw = Path(args.data_noun).read_bytes()
    arrays = build(read_documents(args.data_noun))
    arrays["source_sha256"] = np.array(hashlib.sha256(raw).hexdigest())
    np.savez_compressed(args.out, **arrays)
    v, dom = arrays["vocabulary"], arrays["domain"]
    print(
        f"{args.out}: {v.size} words ({np.sum(dom == 0)} biology, {np.sum(dom == 1)} artifacts), "
        f"{2 * arrays['count'].size} non-zeros, {Path(args.out).stat().st_size / 1e6:.2f} MB"
    )


if __name__ == "__main__":
    main()
