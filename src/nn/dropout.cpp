// workpart::nn_compiled: the layers of <workpart/nn/dropout.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/dropout.hpp>

namespace workpart::nn {
WORKPART_NN_DROPOUT_INSTANCES(, float)
WORKPART_NN_DROPOUT_INSTANCES(, double)
}  // namespace workpart::nn
