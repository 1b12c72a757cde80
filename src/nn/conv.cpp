// workpart::nn_compiled: the layers of <workpart/nn/conv.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/conv.hpp>

namespace workpart::nn {
WORKPART_NN_CONV_INSTANCES(, float)
WORKPART_NN_CONV_INSTANCES(, double)
}  // namespace workpart::nn
