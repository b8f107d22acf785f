from streamlint.cli import main

raise SystemExit(main())
