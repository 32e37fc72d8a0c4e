// The node team arrives with the hierarchy issue; this layer has no code yet.
namespace strata::intra_node_placeholder {}
