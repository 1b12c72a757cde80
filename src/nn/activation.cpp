// workpart::nn_compiled: the layers of <workpart/nn/activation.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/activation.hpp>

namespace workpart::nn {
WORKPART_NN_ACTIVATION_INSTANCES(, float)
WORKPART_NN_ACTIVATION_INSTANCES(, double)
}  // namespace workpart::nn
