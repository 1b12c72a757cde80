// workpart::nn_compiled: the layers of <workpart/nn/reshape.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/reshape.hpp>

namespace workpart::nn {
WORKPART_NN_RESHAPE_INSTANCES(, float)
WORKPART_NN_RESHAPE_INSTANCES(, double)
}  // namespace workpart::nn
