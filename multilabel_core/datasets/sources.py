"""Where the standard Mulan datasets come from: the core's :class:`DatasetSpec` records.

The core plugin (:mod:`multilabel_core._builtin`) registers :data:`SOURCES` through the
``register_datasets`` hook; :func:`~.fetch.fetch_dataset` downloads them and
:func:`~.catalog.known_datasets` lists them.  They are the datasets of the project's shared data
folder, one record per file pair of its README's table, with that table's sizes and label
cardinality (the split files' LCard, which the table leaves out, computed from the files).

Checksums: the SHA-256 of the copies in the project's shared data folder, the Mulan
files as widely redistributed (the folder the tests read).  A download is accepted
only when it is byte-identical to those copies.

URLs: Mulan's maintainers publish the datasets one file per URL in the Mulan
repository on GitHub (``data/multi-label/NAME/``, raw files), which avoids the ``.rar``
archives of the older SourceForge page (the standard library cannot unpack rar).
None of these URLs could be tried from the machine this was written on (it has no
internet).  What was checked, against a code index of the repository (a stored copy,
not the live site):

- ``emotions/emotions.arff`` has the size (380,476 bytes) and the last rows of the copy here, and
  ``scene/scene.xml`` has the same text up to line ends (the copy named ``scene.xml`` here ends
  lines with CRLF; a checkout that normalised line ends would not match);
- ``scene/scene-train.arff`` and ``scene/scene-test.arff`` have the sizes (3,127,968 and 3,090,742
  bytes) and the last rows of the copies here;
- corel5k is published as ``corel5k/Corel5k-sparse.arff`` (the sparse union of the training and
  test sets, beside dense ``Corel5k.arff`` files) with the header ``Corel5k.xml``: the sparse file
  has the size (377,579 bytes), the header and the last rows of ``corel5k.arff`` here, so its URL
  names it; ``Corel5k.xml`` is named by the folder's README, its content was not seen;
- the folder READMEs of emotions, enron and bibtex list ``NAME.arff``, ``NAME.xml``,
  ``NAME-train.arff`` and ``NAME-test.arff``, and cal500's ``cal500.arff`` and ``cal500.xml``;
  their contents were not in the index, so these URLs are unverified, and so are those of yeast's
  and medical's files (their folders showed only cross-validation folds) and ``scene/scene.arff``
  (the scene folder showed the two split files and ``scene.xml``).

Copies that only a mirror serves (``MULTILABEL_CORE_MIRROR``, see :mod:`.fetch`); their URLs
follow the same ``NAME/FILE`` layout, and fetching them from the upstream host is expected to
fail (missing file, or the checksum):

- rcv1subset1 and yahoo-arts are feature-selected copies (500 features, made with Weka's Remove
  filter, as their relation names record), not the all-feature files Mulan publishes;
- yahoo-arts-mkml is not a Mulan file: it was converted from a public MATLAB copy of the Yahoo
  Arts data of the ML-kNN papers (462 features), features as given;
- corel16k001 (Mulan's Corel16k sample 1) was likewise converted from a public MATLAB copy, features
  as given (numeric, sparse rows), so it is not byte-identical to Mulan's ``corel16k001.arff``;
- the ``NAME-train.xml`` and ``NAME-test.xml`` of emotions, scene and yeast: Mulan publishes one
  header ``NAME.xml`` per folder, and these copies are that header with LF line ends where the
  ``NAME.xml`` here has CRLF (``scene-train.xml`` is byte-identical to the index's
  ``scene/scene.xml``).  Each distinct file keeps its own URL path, so that one mirror folder laid
  out by URL path can hold every copy here.
"""

from __future__ import annotations

from ..registry import DatasetSpec

__all__ = ["MULAN_REPOSITORY", "SOURCES"]

MULAN_REPOSITORY = "https://raw.githubusercontent.com/tsoumakas/mulan/master/data/multi-label/"

_TROHIDIS = (
    "K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas. Multilabel classification of music into "
    "emotions. ISMIR 2008."
)
_BOUTELL = (
    "M. R. Boutell, J. Luo, X. Shen, C. M. Brown. Learning multi-label scene classification. "
    "Pattern Recognition 37(9), 2004."
)
_ELISSEEFF = "A. Elisseeff, J. Weston. A kernel method for multi-labelled classification. NIPS 14, 2002."

# name -> (SHA-256 of NAME.arff, SHA-256 of NAME.xml, citation, metadata)
# metadata: n_samples, n_features (X's width as read, one-hot nominal), n_labels, LCard (3
# decimals), sparse rows, and for a split part "split_of" (its whole dataset's "splits" is filled
# in from the parts below).
_MULAN_DATASETS = {
    "emotions": (
        "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b",
        "b20042828c32a6ca0a871c10a298c1b7b17fd2c453e944c1673d9e9b9bda1e68",
        _TROHIDIS,
        dict(n_samples=593, n_features=72, n_labels=6, label_cardinality=1.868, sparse=False),
    ),
    "emotions-train": (
        "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
        "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
        _TROHIDIS + " The standard Mulan training set.",
        dict(n_samples=391, n_features=72, n_labels=6, label_cardinality=1.813, sparse=False, split_of="emotions"),
    ),
    "emotions-test": (
        "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
        "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
        _TROHIDIS + " The standard Mulan test set.",
        dict(n_samples=202, n_features=72, n_labels=6, label_cardinality=1.975, sparse=False, split_of="emotions"),
    ),
    "scene": (
        "5905548975b69b639ab31a295f7bf1ab7379a3f016450012722d28f660f4b143",
        "9de52ca3d3368a831f574de365b94d55679d8d7e35496d13b353983e7d8ad576",
        _BOUTELL,
        dict(n_samples=2407, n_features=294, n_labels=6, label_cardinality=1.074, sparse=False),
    ),
    "scene-train": (
        "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d",
        "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5",
        _BOUTELL + " The standard Mulan training set.",
        dict(n_samples=1211, n_features=294, n_labels=6, label_cardinality=1.062, sparse=False, split_of="scene"),
    ),
    "scene-test": (
        "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42",
        "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5",
        _BOUTELL + " The standard Mulan test set.",
        dict(n_samples=1196, n_features=294, n_labels=6, label_cardinality=1.086, sparse=False, split_of="scene"),
    ),
    "yeast": (
        "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7",
        "45fc49ccfd0e1a45788924f40577ac4c5b1b2cb12748b0f03339ed8cdeb9bf1d",
        _ELISSEEFF,
        dict(n_samples=2417, n_features=103, n_labels=14, label_cardinality=4.237, sparse=False),
    ),
    "yeast-train": (
        "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd",
        "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
        _ELISSEEFF + " The standard Mulan training set.",
        dict(n_samples=1500, n_features=103, n_labels=14, label_cardinality=4.228, sparse=False, split_of="yeast"),
    ),
    "yeast-test": (
        "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a",
        "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
        _ELISSEEFF + " The standard Mulan test set.",
        dict(n_samples=917, n_features=103, n_labels=14, label_cardinality=4.252, sparse=False, split_of="yeast"),
    ),
    "flags": (
        "74776b4a0df6626febf5fc4329a91547a210e971f143a703071cbfd589f4e10e",
        "ee06c0cd9c22d7c29a75ac0a827697ed1af73c7f0b88e8aa733cf84ecf4b16d5",
        "E. C. Goncalves, A. Plastino, A. A. Freitas. A genetic algorithm for optimizing the label "
        "ordering in multi-label classifier chains. ICTAI 2013.",
        # 19 attributes, 9 of them nominal: 46 columns one-hot (19 with nominal="ordinal")
        dict(n_samples=194, n_features=46, n_labels=7, label_cardinality=3.392, sparse=False),
    ),
    "rcv1subset1": (
        "4a2c48fbe2f0daffa329ed8743d9b896fc5dfaf5e26762b2569974e14252d180",
        "398a38599da3f390f4247e08c81c283817875d06a8278b10db3b514855e837dd",
        "D. D. Lewis, Y. Yang, T. G. Rose, F. Li. RCV1: a new benchmark collection for text "
        "categorization research. JMLR 5, 2004 (subset 1, 500 features).",
        dict(n_samples=6000, n_features=500, n_labels=101, label_cardinality=2.880, sparse=True),
    ),
    "yahoo-arts": (
        "2e2d4f9392e83ef1e471d536474721d03e7ec60d1883461581132e436ff5dabf",
        "a9bc707be98393618b080e9dc6fb22e3abccbb83978de61f518d92ac9335edff",
        "N. Ueda, K. Saito. Parametric mixture models for multi-labeled text. NIPS 15, 2003 "
        "(Yahoo Arts, 500 features).",
        dict(n_samples=7484, n_features=500, n_labels=26, label_cardinality=1.654, sparse=True),
    ),
    "yahoo-arts-mkml": (
        "62b806ff5ed34ce0e0934dc45c1f944aa23ce19eaf3f89d1a7b4b5c00600bac9",
        "d0f107cb9c0c5a3200eceeea327d5bb2f99c46fbdc894cfdb3b4c232f9d9d0f8",
        "N. Ueda, K. Saito. Parametric mixture models for multi-labeled text. NIPS 15, 2003 "
        "(Yahoo Arts, 462 features, as used by M.-L. Zhang, Z.-H. Zhou. ML-KNN: a lazy learning "
        "approach to multi-label learning. Pattern Recognition 40(7), 2007).",
        dict(n_samples=5000, n_features=462, n_labels=26, label_cardinality=1.636, sparse=True),
    ),
    "enron": (
        "d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97",
        "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b",
        "B. Klimt, Y. Yang. The Enron corpus: a new dataset for email classification research. "
        "ECML 2004.",
        dict(n_samples=1702, n_features=1001, n_labels=53, label_cardinality=3.378, sparse=True),
    ),
    "medical": (
        "ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4",
        "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce",
        "J. P. Pestian, C. Brew, P. Matykiewicz, D. J. Hovermale, N. Johnson, K. B. Cohen, W. Duch. "
        "A shared task involving multi-label classification of clinical free text. BioNLP 2007 "
        "(the CMC Medical NLP Challenge).",
        dict(n_samples=978, n_features=1449, n_labels=45, label_cardinality=1.245, sparse=True),
    ),
    "corel5k": (
        "12c06161d2367f919f6da912089a6c9180c115cfcefa37afacfdeb903930eb7e",
        "54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d",
        "P. Duygulu, K. Barnard, J. F. G. de Freitas, D. A. Forsyth. Object recognition as machine "
        "translation: learning a lexicon for a fixed image vocabulary. ECCV 2002.",
        dict(n_samples=5000, n_features=499, n_labels=374, label_cardinality=3.522, sparse=True),
    ),
    "corel16k001": (
        "ea29e22e4760f2f4191cf26f83990177d0b4f292365d0e1b215efbb37cec0b11",
        "0fb3d2d914a1d3342c3764062ac06fbaf8aafc5d4d24329a088a363afaa1177c",
        "K. Barnard, P. Duygulu, D. Forsyth, N. de Freitas, D. M. Blei, M. I. Jordan. Matching words and "
        "pictures. JMLR 3, 2003 (Corel16k, sample 1 of Mulan's ten; 500 numeric features as given).",
        dict(n_samples=13766, n_features=500, n_labels=153, label_cardinality=2.859, sparse=True),
    ),
    "bibtex": (
        "a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014",
        "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232",
        "I. Katakis, G. Tsoumakas, I. Vlahavas. Multilabel text classification for automated tag "
        "suggestion. ECML/PKDD 2008 Discovery Challenge.",
        dict(n_samples=7395, n_features=1836, n_labels=159, label_cardinality=2.402, sparse=True),
    ),
    "cal500": (
        "cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3",
        "877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c",
        "D. Turnbull, L. Barrington, D. Torres, G. Lanckriet. Semantic annotation and retrieval of "
        "music and sound effects. IEEE Transactions on Audio, Speech and Language Processing 16(2), 2008.",
        dict(n_samples=502, n_features=68, n_labels=174, label_cardinality=26.044, sparse=False),
    ),
}

# Files whose upstream name is not the name they are cached under (see the module docstring).
_UPSTREAM_NAMES = {
    "corel5k.arff": "Corel5k-sparse.arff",
    "corel5k.xml": "Corel5k.xml",
}


def _url(name: str, filename: str) -> str:
    """The file's URL: Mulan's folder of the whole dataset, then the file's (upstream) name."""
    folder = _MULAN_DATASETS[name][3].get("split_of", name)
    return f"{MULAN_REPOSITORY}{folder}/{_UPSTREAM_NAMES.get(filename, filename)}"


def _splits(name: str) -> dict[str, str]:
    """The parts registered as splits of ``name``, role -> part name (the role is the name's suffix)."""
    return {
        part.rsplit("-", 1)[1]: part
        for part, entry in _MULAN_DATASETS.items()
        if entry[3].get("split_of") == name
    }


def _mulan_spec(name: str) -> DatasetSpec:
    arff_sha256, xml_sha256, citation, metadata = _MULAN_DATASETS[name]
    files = {
        filename: (_url(name, filename), digest)
        for filename, digest in ((f"{name}.arff", arff_sha256), (f"{name}.xml", xml_sha256))
    }
    return DatasetSpec(name, files, format="mulan", citation=citation, splits=_splits(name), **metadata)


SOURCES: tuple[DatasetSpec, ...] = tuple(_mulan_spec(name) for name in _MULAN_DATASETS)
