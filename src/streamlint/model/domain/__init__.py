"""The abstract domain: access paths, stream references, values, order and state; pure data, no syntax, no API."""
