// workpart::nn_compiled: the layers of <workpart/nn/reshape.hpp> for the element types of
// WORKPART_NN_COMPILED_TYPES, compiled once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/reshape.hpp>

namespace workpart::nn {
WORKPART_NN_DEFINE_TEMPLATES(WORKPART_NN_RESHAPE_INSTANCES)
}  // namespace workpart::nn
