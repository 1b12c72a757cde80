// workpart::nn_compiled: the layers of <workpart/nn/attention.hpp> for the element types of
// WORKPART_NN_COMPILED_TYPES, compiled once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/attention.hpp>

namespace workpart::nn {
WORKPART_NN_DEFINE_TEMPLATES(WORKPART_NN_ATTENTION_INSTANCES)
}  // namespace workpart::nn
