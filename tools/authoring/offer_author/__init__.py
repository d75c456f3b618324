"""offer-author: the authoring tool of the offer engine.

Signs in to the engine (device sign-in or a pasted authoring key), exports an offer screen's
files after scanning them for service keys, validates and drafts custom pages, queues and
downloads previews, and scores a preview against a reference screenshot. Standard library
only: it runs on any CPython 3.10 or later with nothing to install.
"""

__version__ = "0.1.0"
