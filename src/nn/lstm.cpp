// workpart::nn_compiled: the layers of <workpart/nn/lstm.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/lstm.hpp>

namespace workpart::nn {
WORKPART_NN_LSTM_INSTANCES(, float)
WORKPART_NN_LSTM_INSTANCES(, double)
}  // namespace workpart::nn
