import sys

from posenc.book.slides.build import main

sys.exit(main())
