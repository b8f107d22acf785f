"""The language server (`streamlint server`): pygls over stdio. Needs the `lsp` extra."""
