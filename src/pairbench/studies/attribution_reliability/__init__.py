"""The ``attribution-reliability`` study: does an engine's blame of a product hold up?

Engines (``pairbench.engines``) browse label-free fixture sites (``site``) as simulated users,
or judge recorded evidence packages, and publish findings; the scorer (version 1.0) measures
whether the blame is deserved against ground truth in ``cases.json`` and ``packages.json``.
"""
