"""``python -m pairbench``."""

from pairbench.cli import main

main()
