"""The configuration as the compiler sees it: freezing the stored objects into a snapshot
(freeze), the way back from a document to stored objects (restore), and when the stored
objects last changed (generation)."""
