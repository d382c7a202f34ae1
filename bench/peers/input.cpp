// Readers for cq-gen's files (bench/gen/gen.h defines the formats) and its
// motion rule, shared by every peer.
#include <cstdio>
#include <ctime>

#include "peers.h"

namespace peers {

namespace {

// Reads n numbers; false at the end of the file or on garbage.
bool read_numbers(FILE *f, double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (std::fscanf(f, "%lf", &v[i]) != 1)
            return false;
    return true;
}

bool read_obb(FILE *f, Obb &o)
{
    double v[15];
    if (!read_numbers(f, v, 15))
        return false;
    for (int i = 0; i < 3; i++) {
        o.c[i] = v[i];
        o.h[i] = v[3 + i];
        for (int k = 0; k < 3; k++)
            o.axis[i][k] = v[6 + 3 * i + k];
    }
    return true;
}

} // namespace

bool read_pairs(const char *path, std::vector<Obb> &a, std::vector<Obb> &b)
{
    FILE *f = std::fopen(path, "r");
    if (!f)
        return false;
    for (Obb x, y; read_obb(f, x) && read_obb(f, y);)
        a.push_back(x), b.push_back(y);
    std::fclose(f);
    return !a.empty();
}

bool read_scene(const char *path, Scene &s)
{
    FILE *f = std::fopen(path, "r");
    if (!f)
        return false;
    bool ok = std::fscanf(f, "%lf %lf", &s.L, &s.dt) == 2;
    for (double v[13]; ok && read_numbers(f, v, 13);) {
        SceneBox x;
        for (int i = 0; i < 3; i++)
            x.c[i] = v[i], x.h[i] = v[3 + i], x.v[i] = v[10 + i];
        for (int i = 0; i < 4; i++)
            x.q[i] = v[6 + i];
        s.boxes.push_back(x);
    }
    std::fclose(f);
    return ok && !s.boxes.empty();
}

bool read_rays(const char *path, std::vector<Ray> &r)
{
    FILE *f = std::fopen(path, "r");
    if (!f)
        return false;
    for (double v[7]; read_numbers(f, v, 7);)
        r.push_back(Ray{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, v[6]});
    std::fclose(f);
    return !r.empty();
}

void advance(Scene &s)
{
    for (SceneBox &x : s.boxes)
        for (int i = 0; i < 3; i++) {
            double next = x.c[i] + x.v[i] * s.dt;
            if (next < -s.L || next > s.L) {
                x.v[i] = -x.v[i];
                next = x.c[i] + x.v[i] * s.dt;
            }
            x.c[i] = next;
        }
}

double now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

} // namespace peers
