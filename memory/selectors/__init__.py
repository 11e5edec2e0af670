"""Read machinery shared by the op families: the read filter (selection) and signed keyset
cursors. Imports models, access and wire; never an op family."""
