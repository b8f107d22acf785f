"""The interpreter: free transfer functions over (state, node, frame); what one walk needs is the `Frame`."""
