"""Where the standard Mulan datasets come from: the core's :class:`DatasetSpec` records.

The core plugin (:mod:`multilabel_core._builtin`) registers :data:`SOURCES` through the
``register_datasets`` hook; :func:`~.fetch.fetch_dataset` downloads them.

Checksums: the SHA-256 of the copies in the project's shared data folder, the Mulan
files as widely redistributed (the folder the tests read).  A download is accepted
only when it is byte-identical to those copies.

URLs: Mulan's maintainers publish the datasets one file per URL in the Mulan
repository on GitHub (``data/multi-label/NAME/``, raw files), which avoids the ``.rar``
archives of the older SourceForge page (the standard library cannot unpack rar).
None of these URLs could be tried from the machine this was written on (it has no
internet).  What was checked, against a code index of the repository: its
``emotions.arff`` has the size (380,476 bytes) and the last rows of the copy here, and
its ``scene/scene.xml`` has the same text up to line ends (the copies here end lines
with CRLF; a checkout that normalised line ends would not match).  rcv1subset1 and
yahoo-arts are feature-selected copies (500 features, made with Weka's Remove filter,
as their relation names record), not the all-feature files Mulan publishes: their
URLs follow the same ``NAME/FILE`` layout so that a mirror holding the copies
(``MULTILABEL_CORE_MIRROR``, see :mod:`.fetch`) serves them, and fetching them from
the upstream host is expected to fail the checksum.
"""

from __future__ import annotations

from ..registry import DatasetSpec

MULAN_REPOSITORY = "https://raw.githubusercontent.com/tsoumakas/mulan/master/data/multi-label/"

# name -> (SHA-256 of NAME.arff, SHA-256 of NAME.xml, citation)
_MULAN_DATASETS = {
    "emotions": (
        "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b",
        "b20042828c32a6ca0a871c10a298c1b7b17fd2c453e944c1673d9e9b9bda1e68",
        "K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas. Multilabel classification of music into "
        "emotions. ISMIR 2008.",
    ),
    "scene": (
        "5905548975b69b639ab31a295f7bf1ab7379a3f016450012722d28f660f4b143",
        "9de52ca3d3368a831f574de365b94d55679d8d7e35496d13b353983e7d8ad576",
        "M. R. Boutell, J. Luo, X. Shen, C. M. Brown. Learning multi-label scene classification. "
        "Pattern Recognition 37(9), 2004.",
    ),
    "yeast": (
        "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7",
        "45fc49ccfd0e1a45788924f40577ac4c5b1b2cb12748b0f03339ed8cdeb9bf1d",
        "A. Elisseeff, J. Weston. A kernel method for multi-labelled classification. NIPS 14, 2002.",
    ),
    "flags": (
        "74776b4a0df6626febf5fc4329a91547a210e971f143a703071cbfd589f4e10e",
        "ee06c0cd9c22d7c29a75ac0a827697ed1af73c7f0b88e8aa733cf84ecf4b16d5",
        "E. C. Goncalves, A. Plastino, A. A. Freitas. A genetic algorithm for optimizing the label "
        "ordering in multi-label classifier chains. ICTAI 2013.",
    ),
    "rcv1subset1": (
        "4a2c48fbe2f0daffa329ed8743d9b896fc5dfaf5e26762b2569974e14252d180",
        "398a38599da3f390f4247e08c81c283817875d06a8278b10db3b514855e837dd",
        "D. D. Lewis, Y. Yang, T. G. Rose, F. Li. RCV1: a new benchmark collection for text "
        "categorization research. JMLR 5, 2004 (subset 1, 500 features).",
    ),
    "yahoo-arts": (
        "2e2d4f9392e83ef1e471d536474721d03e7ec60d1883461581132e436ff5dabf",
        "a9bc707be98393618b080e9dc6fb22e3abccbb83978de61f518d92ac9335edff",
        "N. Ueda, K. Saito. Parametric mixture models for multi-labeled text. NIPS 15, 2003 "
        "(Yahoo Arts, 500 features).",
    ),
}


def _mulan_spec(name: str, arff_sha256: str, xml_sha256: str, citation: str) -> DatasetSpec:
    files = {
        f"{name}.{suffix}": (f"{MULAN_REPOSITORY}{name}/{name}.{suffix}", digest)
        for suffix, digest in (("arff", arff_sha256), ("xml", xml_sha256))
    }
    return DatasetSpec(name, files, format="mulan", citation=citation)


SOURCES: tuple[DatasetSpec, ...] = tuple(_mulan_spec(name, *entry) for name, entry in _MULAN_DATASETS.items())
