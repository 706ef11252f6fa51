import sys

from fastomkl.cli import main

sys.exit(main())
