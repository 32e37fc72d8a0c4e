// Compositions arrive with the hierarchy issue; this layer has no code yet.
namespace strata::hierarchy_placeholder {}
