"""The interpreter: transfer functions over (state, node, frame) for statements, expressions
and calls, with framework handlers over the fact tables. Free functions only: no walker
object, no mixins; what one walk needs is the `Frame`."""
