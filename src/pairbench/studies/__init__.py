"""Built-in studies; each registers through the ``pairbench.studies`` entry point."""

from pairbench.studies._study import Study

__all__ = ["Study"]
