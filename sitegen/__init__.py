"""sitegen: a static website for browsing and comparing SkyRL training runs."""

import gc

__version__ = "0.1.0"

# The ground truth ``sitegen synth`` writes at the root of each archive it makes; a build
# of such an archive says that its damaged inputs are planted on purpose.
SYNTH_TRUTH = "synth-truth.json"

# Containers between young collections of CPython's cyclic garbage collector while sitegen
# works (the default is 700): why, and what it saves, in build._fewer_collections.
YOUNG_COLLECTION_EVERY = 50_000


def collect_less() -> None:
    """Set the collector's young threshold to :data:`YOUNG_COLLECTION_EVERY` (the others kept)."""
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
