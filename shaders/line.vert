#version 330 core
// Lines in the 3D view's box space (the orthogonal planes' outlines).
layout (location = 0) in vec3 a_position;

uniform mat4 u_mvp;

void main ()
{
  gl_Position = u_mvp * vec4 (a_position, 1.0);
}
