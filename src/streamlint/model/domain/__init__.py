"""The abstract domain of the v3 model: access paths, stream references, abstract values,
happens-before order and the state that joins them. Pure data and lattice operations:
nothing here reads syntax or knows a framework's API."""
