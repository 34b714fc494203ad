"""`python -m asaql.cli`."""

from asaql.cli import main

main()
