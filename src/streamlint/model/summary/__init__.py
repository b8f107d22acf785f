"""What a function does to streams and buffers as a value (`FunctionSummary`), applied at calls, performed."""
